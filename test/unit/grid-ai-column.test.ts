/**
 * The "+ AI column" dialog's pure logic: `{{Column}}` references inserted at the cursor and
 * read back, the workflow template they become (rendered with the engine's own template
 * renderer), the answer's JSON Schema from the output fields, and the create plan
 * (checked against the API's own contracts and table invariants).
 */
import { describe, expect, it } from "vitest";
import { type Column, PatchTableRequest, TableSchema } from "@/contracts/table";
import { WorkflowDefinition } from "@/contracts/workflow";
import { checkTableSchema } from "@/domain/table-schema";
import { renderTemplate } from "@/execution/expressions";
import {
  answerShape,
  newAiField,
  planAiColumn,
  tablePatchBody,
  tryInputs,
} from "@/ui/grid/ai-column-plan";
import {
  compileTemplate,
  insertAtCursor,
  insertReference,
  promptReferences,
  referenceFor,
  resolveReference,
} from "@/ui/grid/ai-prompt";
import { byId, columns, form, planned, table } from "../helpers/ai-column-forms";

describe("column references in the prompt", () => {
  it("inserts {{Name}} at the cursor, replacing the selection, and puts the cursor after it", () => {
    const r = insertReference("Classify  please", 9, 9, byId("company"), columns);
    expect(r).toEqual({ text: "Classify {{Company}} please", cursor: 20 });
    const replaced = insertReference("Say X now", 4, 5, byId("country"), columns);
    expect(replaced).toEqual({ text: "Say {{Country}} now", cursor: 15 });
    // A selection made right to left, and positions past the end, still land in the text.
    expect(insertAtCursor("abc", 3, 1, "Z")).toEqual({ text: "aZ", cursor: 2 });
    expect(insertAtCursor("abc", 99, 99, "Z")).toEqual({ text: "abcZ", cursor: 4 });
  });

  it("names a column by its id when its name would not read back to it alone", () => {
    const odd: Column[] = [
      { id: "a", name: "Same", type: "text" },
      { id: "b", name: "Same", type: "text" },
      { id: "c", name: "x}}y", type: "text" },
      { id: "d", name: " padded ", type: "text" },
      { id: "e", name: "b", type: "text" },
      { id: "f", name: "Fine", type: "text" },
    ];
    // b's id is e's name, and b's name is a's too: nothing reads back to b alone.
    expect(odd.map((c) => referenceFor(c, odd))).toEqual(["a", null, "c", "d", "b", "Fine"]);
    for (const c of odd) {
      const ref = referenceFor(c, odd);
      if (ref !== null) expect(resolveReference(ref, odd)?.id).toBe(c.id);
    }
    const b = odd[1] as Column;
    expect(insertReference("ab", 1, 1, b, odd)).toEqual({ text: "ab", cursor: 1 });
  });

  it("lists the columns read in table order, once each, and the references that name none", () => {
    const refs = promptReferences(
      ["{{Employees}} at {{ Company }} ({{Company}}), {{Revenue}}", "{{country}} {{Revenue}}"],
      columns,
    );
    expect(refs.columns.map((c) => c.id)).toEqual(["company", "country", "employees"]);
    expect(refs.unknown).toEqual(["Revenue"]);
  });

  it("compiles references to the group's inputs, which the engine renders with the row's values", async () => {
    const text = "Is {{Company}} ({{Country}}, {{ Employees }} people) in {{Notes}}? {{ 1 + 1 }}";
    const compiled = compileTemplate(text, columns);
    expect(compiled).toBe(
      "Is {{ inputs.company }} ({{ inputs.country }}, {{ inputs.employees }} people) in {{ inputs.industry }}? {{ 1 + 1 }}",
    );
    const rendered = await renderTemplate(compiled, {
      inputs: { company: "Acme", country: "FR", employees: 12, industry: "retail" },
      row: {},
      blocks: {},
      vars: {},
      secrets: {},
    });
    expect(rendered).toBe("Is Acme (FR, 12 people) in retail? 2");
  });

  it("quotes an id JSONata would read as an operator, so it still reads the input", async () => {
    const odd: Column[] = [{ id: "and", name: "And", type: "text" }];
    const compiled = compileTemplate("x {{And}} y", odd);
    expect(compiled).toBe("x {{ inputs.`and` }} y");
    const scope = { inputs: { and: "both" }, row: {}, blocks: {}, vars: {}, secrets: {} };
    expect(await renderTemplate(compiled, scope)).toBe("x both y");
  });
});

describe("the answer's shape from the output fields", () => {
  it("one text field is the plain text answer", () => {
    expect(answerShape([{ name: "Industry", type: "text" }])).toEqual({
      jsonSchema: null,
      paths: ["text"],
    });
  });

  it("one typed field is a one-property schema", () => {
    expect(answerShape([{ name: "Head count", type: "number" }])).toEqual({
      jsonSchema: {
        type: "object",
        properties: { head_count: { type: "number" } },
        required: ["head_count"],
        additionalProperties: false,
      },
      paths: ["head_count"],
    });
  });

  it("several fields are a strict object schema, one property per field", () => {
    const shape = answerShape([
      { name: "Industry", type: "text" },
      { name: "Size", type: "number" },
      { name: "Is B2B?", type: "boolean" },
    ]);
    expect(shape.jsonSchema).toEqual({
      type: "object",
      properties: {
        industry: { type: "string" },
        size: { type: "number" },
        is_b2b: { type: "boolean" },
      },
      required: ["industry", "size", "is_b2b"],
      additionalProperties: false,
    });
    expect(shape.paths).toEqual(["industry", "size", "is_b2b"]);
  });
});

describe("the create plan", () => {
  const twoFields = () => [newAiField("Industry"), newAiField("Size", "number")];

  it("makes an llm workflow reading the referenced columns, typed columns and the group mapping both", () => {
    const plan = planned(
      form(
        {
          name: "Classify",
          prompt: "Classify {{Company}} from {{Country}} ({{Employees}} people)",
          system: "Be brief.",
          model: " gpt-4o-mini ",
          maxTokens: "200",
        },
        twoFields(),
      ),
    );
    expect(plan.workflow.name).toBe("Classify");
    expect(plan.workflow.definition.inputs).toEqual([
      { name: "company", type: "text", required: true },
      { name: "country", type: "text", required: true },
      { name: "employees", type: "number", required: true },
    ]);
    expect(plan.workflow.definition.blocks).toEqual([
      {
        id: "ai",
        type: "llm",
        provider: "openai",
        model: "gpt-4o-mini",
        system: "Be brief.",
        prompt:
          "Classify {{ inputs.company }} from {{ inputs.country }} ({{ inputs.employees }} people)",
        jsonSchema: {
          type: "object",
          properties: { industry: { type: "string" }, size: { type: "number" } },
          required: ["industry", "size"],
          additionalProperties: false,
        },
        temperature: 0,
        maxTokens: 200,
      },
    ]);
    // "industry" is taken by the Notes column: the new column gets the next id.
    expect(plan.columns).toEqual([
      { id: "industry_2", name: "Industry", type: "text" },
      { id: "size", name: "Size", type: "number" },
    ]);
    expect(plan.group).toEqual({
      id: "classify",
      name: "Classify",
      kind: "workflow",
      version: "live",
      inputs: { company: "company", country: "country", employees: "employees" },
      outputs: [
        { columnId: "industry_2", from: "ai.industry" },
        { columnId: "size", from: "ai.size" },
      ],
      dependsOn: ["company", "country", "employees"],
      autoRun: false,
    });
  });

  it("is accepted by the API's workflow contract and its table schema checks", () => {
    const plan = planned(form({ name: "Classify", prompt: "{{Company}}" }, twoFields()));
    expect(WorkflowDefinition.safeParse(plan.workflow.definition).success).toBe(true);
    const body = tablePatchBody(table, plan, "wf_123");
    const parsed = PatchTableRequest.parse(body);
    const schema = TableSchema.parse({ columns: parsed.columns, groups: parsed.groups });
    expect(checkTableSchema(schema, new Set())).toEqual([]);
    expect(body.columns.slice(0, columns.length)).toEqual(columns);
    expect(body.groups.at(-1)).toMatchObject({ id: "classify", workflowId: "wf_123" });
  });

  it("a lone unnamed field is the column named after the AI column, answered as text", () => {
    const plan = planned(form({ name: "Summary", prompt: "Sum up {{Notes}}" }));
    expect(plan.columns).toEqual([{ id: "summary", name: "Summary", type: "text" }]);
    expect(plan.group.outputs).toEqual([{ columnId: "summary", from: "ai.text" }]);
    expect(plan.workflow.definition.blocks[0]).not.toHaveProperty("jsonSchema");
    expect(plan.workflow.definition.blocks[0]).not.toHaveProperty("maxTokens");
    expect(plan.workflow.definition.blocks[0]).not.toHaveProperty("system");
  });

  it("a group id already taken gets a suffix; a base URL and Anthropic are kept", () => {
    const taken = {
      columns,
      groups: [
        {
          id: "summary",
          name: "Old",
          kind: "workflow" as const,
          workflowId: "w",
          version: "live" as const,
          inputs: {},
          outputs: [],
          dependsOn: [],
          autoRun: false,
        },
      ],
    };
    const plan = planned(
      form({
        name: "Summary",
        prompt: "x",
        provider: "anthropic",
        model: "claude-3-5-haiku-latest",
        baseUrl: "http://127.0.0.1:9/v1",
        temperature: "0.5",
      }),
      taken,
    );
    expect(plan.group.id).toBe("summary_2");
    expect(plan.workflow.definition.inputs).toEqual([]);
    expect(plan.workflow.definition.blocks[0]).toMatchObject({
      provider: "anthropic",
      baseUrl: "http://127.0.0.1:9/v1",
      temperature: 0.5,
    });
  });

  it("refuses what it can't create, each error on its field", () => {
    const [a, b, c] = [newAiField("Company"), newAiField("company"), newAiField("")];
    const p = planAiColumn(
      table,
      form(
        {
          name: " ",
          prompt: "{{Compny}} and {{Revenue}}",
          system: "About {{Company}}",
          provider: "anthropic",
          model: "",
          baseUrl: "ftp://x",
          temperature: "1.5",
          maxTokens: "12.5",
        },
        [a, b, c],
      ),
    );
    expect(p.ok).toBe(false);
    if (p.ok) return;
    expect(p.errors).toEqual({
      name: "Name the AI column",
      prompt: "“{{Compny}}”, “{{Revenue}}” are not columns of this table",
      system: "The system prompt is sent as written: put column references in the prompt",
      model: "Name the model",
      baseUrl: "An http(s) URL, or blank for the default endpoint",
      temperature: "A number from 0 to 1",
      maxTokens: "A whole number from 1 to 1,000,000, or blank",
      [`field.${a.key}`]: "The table already has a column “Company”",
      [`field.${b.key}`]: "The table already has a column “company”",
      [`field.${c.key}`]: "Name the field (it becomes the column’s name)",
    });
  });

  it("refuses two fields with the same name and an empty prompt", () => {
    const [a, b] = [newAiField("Size"), newAiField("size ")];
    const p = planAiColumn(table, form({ name: "X", prompt: "  " }, [a, b]));
    expect(p).toEqual({
      ok: false,
      errors: {
        prompt: "Write what to ask about each row",
        [`field.${b.key}`]: "Two fields have this name",
      },
    });
    expect(planAiColumn(table, form({ name: "X", prompt: "p" }, []))).toEqual({
      ok: false,
      errors: { fields: "Add at least one output field" },
    });
  });

  it("a try's inputs are the row's values of the columns read, blank as null", () => {
    const plan = planned(form({ name: "C", prompt: "{{Company}} {{Employees}}" }));
    expect(tryInputs(plan, { company: "Acme", country: "FR" })).toEqual({
      company: "Acme",
      employees: null,
    });
  });
});

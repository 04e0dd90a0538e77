/**
 * The "+ AI column" dialog's pure logic: `{{Column}}` references inserted at the cursor and
 * read back, the workflow template they become (rendered with the engine's own template
 * renderer), the answer's JSON Schema from the output fields, the create plan (checked
 * against the API's own contracts and table invariants, and run through the real llm
 * block against a loopback model), the create steps and what a failure leaves, the try
 * preview, and the cell details' model calls.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Column, PatchTableRequest, TableSchema, type TableView } from "@/contracts/table";
import { WorkflowDefinition } from "@/contracts/workflow";
import { checkTableSchema } from "@/domain/table-schema";
import { pickOutput, runWorkflow } from "@/execution/executor";
import { renderTemplate } from "@/execution/expressions";
import {
  type AiColumnCalls,
  createAiColumn,
  createFailureText,
  ensureWorkflow,
} from "@/ui/grid/ai-column-create";
import {
  type AiColumnForm,
  type AiColumnPlan,
  type AiField,
  answerShape,
  emptyAiForm,
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
import { previewOf, shownValue, tryRowId, WorkflowTestAnswer } from "@/ui/grid/ai-try";
import { creditsText, formatCredits, latestLlmCalls, llmCalls } from "@/ui/grid/llm-details";

const columns: Column[] = [
  { id: "company", name: "Company", type: "text" },
  { id: "country", name: "Country", type: "select", options: ["FR", "US"] },
  { id: "employees", name: "Employees", type: "number" },
  { id: "industry", name: "Notes", type: "text" },
];
const table: Pick<TableView, "columns" | "groups"> = { columns, groups: [] };
const byId = (id: string) => columns.find((c) => c.id === id) as Column;

function form(over: Partial<AiColumnForm>, fields?: AiField[]): AiColumnForm {
  return { ...emptyAiForm(), ...over, ...(fields ? { fields } : {}) };
}

function planned(f: AiColumnForm, t = table): AiColumnPlan {
  const p = planAiColumn(t, f);
  if (!p.ok) throw new Error(`not planned: ${JSON.stringify(p.errors)}`);
  return p.plan;
}

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

describe("the planned workflow, run by the engine against a loopback model", () => {
  interface Seen {
    messages: { role: string; content: string }[];
    response_format?: { json_schema?: { schema?: { properties?: Record<string, unknown> } } };
  }
  const seen: Seen[] = [];
  let server: http.Server;
  let baseUrl = "";
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let raw = "";
      req.on("data", (c: Buffer) => {
        raw += c.toString();
      });
      req.on("end", () => {
        const body = JSON.parse(raw) as Seen;
        seen.push(body);
        const props = body.response_format?.json_schema?.schema?.properties;
        // A schema: one value per property (strings say which, numbers count the prompt).
        const user = body.messages.find((m) => m.role === "user")?.content ?? "";
        const content = props
          ? JSON.stringify(
              Object.fromEntries(
                Object.entries(props).map(([k, v]) => [
                  k,
                  (v as { type: string }).type === "number" ? user.length : `${k} of ${user}`,
                ]),
              ),
            )
          : `answer to ${user}`;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "c1",
            object: "chat.completion",
            created: 0,
            model: "m",
            choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content } }],
            usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const run = async (plan: AiColumnPlan, data: Record<string, unknown>) => {
    const out = await runWorkflow({
      definition: WorkflowDefinition.parse(plan.workflow.definition),
      inputs: tryInputs(plan, data),
      row: {},
      executionId: "exec-1",
      signal: new AbortController().signal,
      secrets: { LLM_API_KEY: "test-key" },
    });
    return plan.fields.map((f) => [f.columnId, pickOutput(out.blocks, f.from)]);
  };

  it("a text answer lands in its column, asked with the row's values", async () => {
    const plan = planned(form({ name: "Summary", prompt: "About {{Company}}", baseUrl }));
    expect(await run(plan, { company: "Acme" })).toEqual([["summary", "answer to About Acme"]]);
    expect(seen.at(-1)?.messages.filter((m) => m.role === "user")).toEqual([
      { role: "user", content: "About Acme" },
    ]);
  });

  it("each field of a JSON answer lands in its own column", async () => {
    const plan = planned(
      form({ name: "Classify", prompt: "{{Company}} in {{Country}}", baseUrl }, [
        newAiField("Industry"),
        newAiField("Size", "number"),
      ]),
    );
    expect(await run(plan, { company: "Acme", country: "FR" })).toEqual([
      ["industry_2", "industry of Acme in FR"],
      ["size", "Acme in FR".length],
    ]);
  });
});

describe("creating: the steps and what a failure leaves", () => {
  const plan = () => planned(form({ name: "Classify", prompt: "{{Company}}" }));
  const created = { id: "t1", name: "T", columns, groups: [] } as unknown as TableView;

  /** An API that records what it was asked and fails where told. */
  function api(fail: { workflow?: boolean; table?: boolean } = {}) {
    const asked: string[] = [];
    const calls: AiColumnCalls = {
      async createWorkflow(body) {
        asked.push(`create ${body.name}`);
        if (fail.workflow) throw new Error("workflow refused");
        return { id: "wf_new" };
      },
      async updateWorkflow(id, body) {
        asked.push(`update ${id} ${body.name}`);
        if (fail.workflow) throw new Error("workflow refused");
        return {};
      },
      async patchTable(body) {
        const group = body.groups.at(-1);
        asked.push(`patch ${group?.kind === "workflow" ? group.workflowId : "?"}`);
        if (fail.table) throw new Error("table refused");
        return created;
      },
    };
    return { asked, calls };
  }

  it("creates the workflow, then the columns and group naming it", async () => {
    const { asked, calls } = api();
    const outcome = await createAiColumn(calls, table, plan(), null);
    expect(outcome).toEqual({ ok: true, table: created, workflowId: "wf_new" });
    expect(asked).toEqual(["create Classify", "patch wf_new"]);
  });

  it("a draft a try saved is updated to the form, not made again", async () => {
    const { asked, calls } = api();
    expect(await ensureWorkflow(calls, plan(), "wf_try")).toBe("wf_try");
    expect(await ensureWorkflow(calls, plan(), null)).toBe("wf_new");
    asked.length = 0;
    const outcome = await createAiColumn(calls, table, plan(), "wf_try");
    expect(outcome.ok && outcome.workflowId).toBe("wf_try");
    expect(asked).toEqual(["update wf_try Classify", "patch wf_try"]);
  });

  it("a refused table change keeps the workflow's id and says it was saved", async () => {
    const { asked, calls } = api({ table: true });
    const outcome = await createAiColumn(calls, table, plan(), null);
    expect(asked).toEqual(["create Classify", "patch wf_new"]);
    expect(outcome).toMatchObject({ ok: false, stage: "table", workflowId: "wf_new" });
    if (outcome.ok) return;
    expect(createFailureText(outcome, "Classify", "bad")).toBe(
      "The workflow “Classify” was saved, but the columns and group could not be added to the table: bad. Create again to retry; it reuses that workflow.",
    );
  });

  it("a refused workflow adds nothing to the table", async () => {
    const { asked, calls } = api({ workflow: true });
    const outcome = await createAiColumn(calls, table, plan(), null);
    expect(asked).toEqual(["create Classify"]);
    expect(outcome).toMatchObject({ ok: false, stage: "workflow", workflowId: null });
    if (outcome.ok) return;
    expect(createFailureText(outcome, "Classify", "bad")).toBe(
      "The workflow could not be created, so nothing was added: bad",
    );
  });
});

describe("trying on a row", () => {
  const twoFields = () =>
    planned(
      form({ name: "Classify", prompt: "{{Company}}" }, [
        newAiField("Industry"),
        newAiField("Size", "number"),
      ]),
    );

  it("starts on the first selected row the grid shows, else the first row", () => {
    const rows = [{ id: "r1" }, { id: "r2" }, { id: "r3" }];
    expect(tryRowId(rows, new Set(["r3", "r2"]))).toBe("r2");
    expect(tryRowId(rows, new Set(["gone"]))).toBe("r1");
    expect(tryRowId([], new Set())).toBeNull();
  });

  it("previews each field from the block's output", () => {
    const answer = WorkflowTestAnswer.parse({
      status: "completed",
      outputs: { industry: "retail", size: 40 },
      blocks: [
        { id: "ai", status: "completed", output: { industry: "retail", size: 40 }, error: null },
      ],
    });
    expect(previewOf(twoFields(), answer)).toEqual({
      ok: true,
      costCredits: null,
      values: [
        { name: "Industry", columnId: "industry_2", value: "retail" },
        { name: "Size", columnId: "size", value: 40 },
      ],
    });
    // Without the block listed, the workflow's outputs (its one block's output) are read.
    const bare = WorkflowTestAnswer.parse({ status: "completed", outputs: { text: "hi" } });
    const text = planned(form({ name: "Say", prompt: "x" }));
    expect(previewOf(text, WorkflowTestAnswer.parse({ ...bare, costCredits: 0.018 }))).toEqual({
      ok: true,
      costCredits: 0.018,
      values: [{ name: "Say", columnId: "say", value: "hi" }],
    });
  });

  it("a failed or paused try says why, with the blocks' errors", () => {
    const failed = WorkflowTestAnswer.parse({
      status: "error",
      outputs: null,
      blocks: [{ id: "ai", status: "error", error: "the model refused", durationMs: 3 }],
    });
    expect(previewOf(twoFields(), failed)).toEqual({
      ok: false,
      error: "The try failed: ai: the model refused",
    });
    const timedOut = WorkflowTestAnswer.parse({
      status: "error",
      blocks: [{ id: "ai", status: "cancelled", error: null }],
      error: "the test ran past 60 s",
    });
    expect(previewOf(twoFields(), timedOut)).toEqual({
      ok: false,
      error: "The try failed: the test ran past 60 s",
    });
    const paused = WorkflowTestAnswer.parse({ status: "paused", blocks: [] });
    expect(previewOf(twoFields(), paused)).toEqual({ ok: false, error: "The workflow paused." });
    expect(WorkflowTestAnswer.safeParse({ status: "done" }).success).toBe(false);
  });

  it("shows values as the grid would", () => {
    expect([shownValue("a"), shownValue(3), shownValue(false), shownValue(null)]).toEqual([
      "a",
      "3",
      "false",
      "—",
    ]);
  });
});

describe("a cell's model calls", () => {
  const details = {
    costCredits: 0.0125,
    llm: {
      ai: {
        model: "gpt-4o-mini",
        inputTokens: 1234,
        outputTokens: 56,
        costCredits: 0.0125,
        cached: false,
      },
      check: { model: "claude", inputTokens: 10, outputTokens: 2, costCredits: 0, cached: true },
      junk: "not an object",
    },
  };

  it("reads each llm block's model, tokens, cost and cache hit", () => {
    expect(llmCalls(details)).toEqual([
      {
        blockId: "ai",
        model: "gpt-4o-mini",
        inputTokens: 1234,
        outputTokens: 56,
        costCredits: 0.0125,
        cached: false,
      },
      {
        blockId: "check",
        model: "claude",
        inputTokens: 10,
        outputTokens: 2,
        costCredits: 0,
        cached: true,
      },
    ]);
    expect(llmCalls({ steps: [] })).toEqual([]);
    expect(llmCalls(null)).toEqual([]);
  });

  it("takes the newest attempt that called a model", () => {
    const attempts = [
      { attempt: 3, details: {} },
      { attempt: 2, details },
      { attempt: 1, details: { llm: { ai: { model: "old" } } } },
    ];
    const latest = latestLlmCalls(attempts);
    expect(latest?.attempt.attempt).toBe(2);
    expect(latest?.calls.map((c) => c.blockId)).toEqual(["ai", "check"]);
    expect(latestLlmCalls([{ details: {} }])).toBeNull();
  });

  it("shows credits to a thousandth", () => {
    expect([0.0125, 2, 1.5, 0.0004, 1234.5678].map(formatCredits)).toEqual([
      "0.013",
      "2",
      "1.5",
      "0",
      "1234.568",
    ]);
    expect([creditsText(1), creditsText(0.25)]).toEqual(["1 credit", "0.25 credits"]);
  });
});

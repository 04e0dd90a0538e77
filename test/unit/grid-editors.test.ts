/**
 * The grid editors' pure logic: ids derived from names, the PATCH bodies the column and
 * group editors send (checked against the API's own schema and invariants), and API
 * issue paths landing on the right field of the form.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EnrichmentView } from "@/contracts/enrichments";
import { type Column, type Group, PatchTableRequest, TableSchema } from "@/contracts/table";
import { checkTableSchema } from "@/domain/table-schema";
import { listEnrichments } from "@/enrichments/registry";
import {
  columnFormFrom,
  columnFromForm,
  columnIssues,
  columnsWithSaved,
  columnUsage,
  describeUsage,
  parseOptions,
  validateColumnForm,
} from "@/ui/grid/column-form";
import { CLIENT_ID, idFromName } from "@/ui/grid/editor-ids";
import {
  addAllEnrichmentOutputs,
  applyEnrichmentChoice,
  applyWorkflowChoice,
  defaultFrom,
  suggestInputs,
  suggestOutputName,
  terminalBlockIds,
} from "@/ui/grid/group-choices";
import {
  defaultDependsOn,
  enrichmentColumnType,
  type GroupForm,
  groupField,
  groupFormFrom,
  NEW_COLUMN,
  outputRow,
} from "@/ui/grid/group-form";
import { buildGroupPatch, groupIssues, validateGroupForm } from "@/ui/grid/group-patch";
import { issuePlace } from "@/ui/grid/issue-paths";

const columns: Column[] = [
  { id: "name", name: "Name", type: "text" },
  { id: "email", name: "Email", type: "text" },
  { id: "n", name: "N", type: "number" },
  { id: "size", name: "Size", type: "text" },
  { id: "stage", name: "Stage", type: "select", options: ["lead", "customer"] },
];

const classify: Group = {
  id: "classify",
  name: "Classify",
  kind: "workflow",
  workflowId: "wf_1",
  version: "live",
  inputs: { n: "n" },
  outputs: [{ columnId: "size", from: "big" }],
  dependsOn: ["n"],
  autoRun: true,
};

const table = { columns, groups: [classify] };

const emailDomain: EnrichmentView = {
  id: "email_domain",
  name: "E-mail domain",
  description: "The domain of an e-mail address",
  cost: 0,
  inputs: [{ id: "email", type: "text", required: true, description: "An e-mail address" }],
  outputs: [
    { id: "domain", type: "text", description: "The address's domain" },
    { id: "is_free", type: "boolean", description: "Whether the domain is a free provider" },
  ],
};

function form(over: Partial<GroupForm>): GroupForm {
  return { ...groupFormFrom(), ...over };
}

/** What the server would answer: zod parse issues, then the schema invariants. */
function serverIssues(body: unknown): { path: string; message: string }[] {
  const parsed = PatchTableRequest.safeParse(body);
  if (!parsed.success) {
    return parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
  }
  const schema = TableSchema.parse({
    columns: parsed.data.columns ?? [],
    groups: parsed.data.groups ?? [],
  });
  return checkTableSchema(schema, new Set(listEnrichments().map((e) => e.id)));
}

describe("ids from names", () => {
  it("derives a readable id", () => {
    expect(idFromName("Company size", [])).toBe("company_size");
    expect(idFromName("  Émail Adresse ", [])).toBe("email_adresse");
    expect(idFromName("2024 revenue", [])).toBe("column_2024_revenue");
    expect(idFromName("!!!", [])).toBe("column");
    expect(idFromName("Enrich", [], "group")).toBe("enrich");
  });

  it("avoids taken ids", () => {
    expect(idFromName("Name", ["name"])).toBe("name_2");
    expect(idFromName("Name", ["name", "name_2"])).toBe("name_3");
  });

  it("is always valid and unique, however long or odd the name", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), fc.array(fc.string()), (name, extra) => {
        const long = "x".repeat(63);
        const taken = [long, `${"x".repeat(61)}_2`, idFromName(name, []), ...extra];
        const id = idFromName(name, taken);
        expect(id).toMatch(CLIENT_ID);
        expect(taken).not.toContain(id);
      }),
    );
    const long = idFromName("y".repeat(80), ["y".repeat(63)]);
    expect(long).toMatch(CLIENT_ID);
    expect(long.endsWith("_2")).toBe(true);
  });
});

describe("column editor", () => {
  it("adds a column at the end and keeps an edited one in place", () => {
    const added = columnsWithSaved(columns, { id: "city", name: "City", type: "text" });
    expect(added.index).toBe(columns.length);
    expect(added.columns.map((c) => c.id).at(-1)).toBe("city");

    const edited = columnsWithSaved(columns, { id: "n", name: "Count", type: "number" }, "n");
    expect(edited.index).toBe(2);
    expect(edited.columns.map((c) => c.id)).toEqual(columns.map((c) => c.id));
    expect(edited.columns[2]?.name).toBe("Count");
    expect(serverIssues({ columns: edited.columns, groups: [classify] })).toEqual([]);
  });

  it("builds select options from lines, and drops them for other types", () => {
    expect(parseOptions(" a \n\nb\r\na\n ")).toEqual(["a", "b"]);
    const select = columnFromForm({ name: " Tier ", id: "tier", type: "select", options: "A\nB" });
    expect(select).toEqual({ id: "tier", name: "Tier", type: "select", options: ["A", "B"] });
    const back = columnFromForm({ ...columnFormFrom(columns[4]), type: "text" });
    expect(back).toEqual({ id: "stage", name: "Stage", type: "text" });
    expect(serverIssues({ columns: [select, back] })).toEqual([]);
  });

  it("checks the form as the API would", () => {
    const ok = validateColumnForm({ name: "City", id: "city", type: "text", options: "" }, columns);
    expect(ok).toEqual({});
    const bad = validateColumnForm(
      { name: " ", id: "email", type: "select", options: "\n" },
      columns,
    );
    expect(Object.keys(bad).sort()).toEqual(["id", "name", "options"]);
    expect(validateColumnForm({ ...columnFormFrom(), name: "X", id: "9x" }, columns).id).toMatch(
      /letter/,
    );
    // Editing: the id is its own.
    expect(validateColumnForm(columnFormFrom(columns[1]), columns, "email")).toEqual({});
  });

  it("puts an issue on the field of the column being edited, the rest aside", () => {
    const split = columnIssues(
      [
        { path: "columns.3.name", message: "must not be empty" },
        { path: "columns.3.options.0", message: "too long" },
        { path: "columns.1.name", message: "someone else's" },
        { path: "groups.0.outputs.0.columnId", message: 'unknown column "size"' },
      ],
      3,
    );
    expect(split.fields).toEqual({ name: "must not be empty", options: "too long" });
    expect(split.rest.map((i) => i.path)).toEqual([
      "columns.1.name",
      "groups.0.outputs.0.columnId",
    ]);
  });

  it("maps the paths of a real rejected body", () => {
    const { columns: next, index } = columnsWithSaved(columns, {
      id: "tier",
      name: "Tier",
      type: "select",
    });
    const split = columnIssues(serverIssues({ columns: next }), index);
    expect(split.fields.options).toMatch(/options/);
    expect(split.rest).toEqual([]);
  });

  it("says which groups use a column and how", () => {
    const uses = columnUsage(
      [classify, { ...classify, id: "b", name: "B", inputs: {}, outputs: [], dependsOn: ["size"] }],
      "size",
    );
    expect(uses).toEqual([
      { groupId: "classify", groupName: "Classify", roles: ["output"] },
      { groupId: "b", groupName: "B", roles: ["dependency"] },
    ]);
    expect(columnUsage([classify], "n")[0]?.roles).toEqual(["input", "dependency"]);
    expect(describeUsage(columnUsage([classify], "n"))).toEqual([
      "“Classify” uses it as an input and a dependency.",
    ]);
    expect(columnUsage([classify], "email")).toEqual([]);
  });
});

describe("group editor: the PATCH body", () => {
  it("adds a new output column once and maps the output to it", () => {
    const f = form({
      name: "Domain",
      id: "domain",
      kind: "enrichment",
      enrichmentId: "email_domain",
      inputs: { email: "email" },
      outputs: [
        outputRow("domain", NEW_COLUMN, "Name"),
        outputRow("is_free", NEW_COLUMN, "Free mail"),
      ],
      dependsOn: ["email"],
    });
    const patch = buildGroupPatch(table, f, { inputNames: ["email"], enrichment: emailDomain });
    const { columns: cols, groups } = patch.body;
    expect(cols.slice(0, columns.length)).toEqual(columns);
    const added = cols.slice(columns.length);
    // "Name" is taken as an id: the new column gets name_2, and keeps its name.
    expect(added).toEqual([
      { id: "name_2", name: "Name", type: "text" },
      { id: "free_mail", name: "Free mail", type: "boolean" },
    ]);
    expect(groups).toHaveLength(2);
    expect(groups[1]).toEqual({
      id: "domain",
      name: "Domain",
      kind: "enrichment",
      enrichmentId: "email_domain",
      inputs: { email: "email" },
      outputs: [
        { columnId: "name_2", from: "domain" },
        { columnId: "free_mail", from: "is_free" },
      ],
      dependsOn: ["email"],
      autoRun: false,
    });
    expect(patch.groupIndex).toBe(1);
    expect(patch.newColumns.map((n) => n.index)).toEqual([5, 6]);
    expect(serverIssues(patch.body)).toEqual([]);

    // Building again (a retry after an error) does not pile up columns.
    const again = buildGroupPatch(table, f, { inputNames: ["email"], enrichment: emailDomain });
    expect(again.body.columns).toHaveLength(columns.length + 2);
  });

  it("replaces an edited group in place, with new columns typed text for workflows", () => {
    const f = groupFormFrom(classify);
    f.name = "Classify N";
    f.outputs.push(outputRow("double", NEW_COLUMN, "Double"));
    const other: Group = { ...classify, id: "other", name: "Other", outputs: [] };
    const t = { columns, groups: [classify, other] };
    const patch = buildGroupPatch(t, f, { editingId: "classify", inputNames: ["n"] });
    expect(patch.body.groups.map((g) => g.id)).toEqual(["classify", "other"]);
    expect(patch.groupIndex).toBe(0);
    expect(patch.body.groups[0]).toMatchObject({
      name: "Classify N",
      workflowId: "wf_1",
      outputs: [
        { columnId: "size", from: "big" },
        { columnId: "double", from: "double" },
      ],
    });
    expect(patch.body.columns.at(-1)).toEqual({ id: "double", name: "Double", type: "text" });
    expect(serverIssues(patch.body)).toEqual([]);
  });

  it("keeps only the source's inputs, skips blank output rows, orders dependencies", () => {
    const f = form({
      name: "X",
      id: "x",
      workflowId: "wf_2",
      inputs: { n: "n", gone: "email", empty: "" },
      outputs: [outputRow(), outputRow("end", "stage")],
      dependsOn: ["name", "email", "nope"],
    });
    const g = buildGroupPatch(table, f, { inputNames: ["n", "empty"] }).body.groups[1];
    expect(g?.kind === "workflow" && g.inputs).toEqual({ n: "n" });
    expect(g?.outputs).toEqual([{ columnId: "stage", from: "end" }]);
    expect(g?.dependsOn).toEqual(["name", "email"]);
    // Unknown source inputs (it did not load): every mapping is kept.
    const all = buildGroupPatch(table, f, { inputNames: null }).body.groups[1];
    expect(all?.kind === "workflow" && all.inputs).toEqual({ n: "n", gone: "email" });
  });

  it("maps enrichment output types to column types", () => {
    expect(enrichmentColumnType("text")).toBe("text");
    expect(enrichmentColumnType("number")).toBe("number");
    expect(enrichmentColumnType("boolean")).toBe("boolean");
    expect(enrichmentColumnType("json")).toBe("json");
    expect(enrichmentColumnType("something")).toBe("text");
    for (const e of listEnrichments()) {
      for (const o of e.outputs) expect(enrichmentColumnType(o.type)).toBe(o.type);
    }
  });
});

describe("group editor: issues onto fields", () => {
  it("lands each path on the matching field of the edited group", () => {
    const f = form({
      name: "G",
      id: "g",
      workflowId: "wf",
      outputs: [outputRow("a", "email"), outputRow("b", NEW_COLUMN, "New")],
    });
    const patch = buildGroupPatch(table, f, { inputNames: null });
    const [rowA, rowB] = f.outputs.map((r) => r.key);
    if (rowA === undefined || rowB === undefined) throw new Error("rows");
    const split = groupIssues(
      [
        { path: "groups.1.outputs.0.columnId", message: "already owned" },
        { path: "groups.1.outputs.1.from", message: "bad from" },
        { path: "groups.1.dependsOn.0", message: "unknown column" },
        { path: "groups.1.dependsOn", message: "too many" },
        { path: "groups.1.inputs.n", message: "unknown column" },
        { path: "groups.1.workflowId", message: "unknown workflow" },
        { path: "columns.5.name", message: "bad name" },
        { path: "groups.0.outputs.0.columnId", message: "other group" },
        { path: "groups.1", message: "reads its own output" },
        { path: "groups", message: "dependency cycle" },
      ],
      patch,
    );
    expect(split.fields).toEqual({
      [groupField.outputColumn(rowA)]: "already owned",
      [groupField.outputFrom(rowB)]: "bad from",
      [groupField.outputColumn(rowB)]: "bad name",
      dependsOn: "unknown column; too many",
      [groupField.input("n")]: "unknown column",
      source: "unknown workflow",
    });
    expect(split.rest.map((i) => i.path)).toEqual([
      "groups.0.outputs.0.columnId",
      "groups.1",
      "groups",
    ]);
  });

  it("follows the edited group's index, and leaves hidden fields to the notice", () => {
    const patch = buildGroupPatch(
      { columns, groups: [classify, { ...classify, id: "b", name: "B", outputs: [] }] },
      groupFormFrom(classify),
      { editingId: "classify", inputNames: ["n"] },
    );
    const split = groupIssues(
      [
        { path: "groups.0.dependsOn.0", message: "x" },
        { path: "groups.1.dependsOn.0", message: "y" },
        { path: "groups.0.inputs.ghost", message: "z" },
      ],
      patch,
      (field) => field !== groupField.input("ghost"),
    );
    expect(split.fields).toEqual({ dependsOn: "x" });
    expect(split.rest.map((i) => i.message)).toEqual(["y", "z"]);
  });

  it("places the server's real answer to a doubly owned column on that row", () => {
    // "size" is already Classify's output.
    const f = form({ name: "Dup", id: "dup", workflowId: "wf", outputs: [outputRow("a", "size")] });
    const patch = buildGroupPatch(table, f, { inputNames: null });
    const issues = serverIssues(patch.body);
    expect(issues.length).toBeGreaterThan(0);
    const split = groupIssues(issues, patch);
    const key = groupField.outputColumn(f.outputs[0]?.key ?? "");
    expect(split.fields[key]).toMatch(/already an output/);
    expect(split.rest).toEqual([]);
  });

  it("names the place of an unplaced issue", () => {
    const body = { columns, groups: [classify] };
    expect(issuePlace("groups.0.outputs.0.columnId", body)).toBe("Group “Classify”, output 1");
    expect(issuePlace("groups.0.dependsOn", body)).toBe("Group “Classify” (dependsOn)");
    expect(issuePlace("columns.2.type", body)).toBe("Column “N” (type)");
    expect(issuePlace("groups", body)).toBe("Groups");
    expect(issuePlace("groups.9", body)).toBe("groups.9");
  });
});

describe("group editor: checks and defaults", () => {
  it("flags what the API would reject, on the right fields", () => {
    const f = form({
      name: "",
      id: "classify",
      workflowId: "",
      inputs: { n: "n" },
      outputs: [
        outputRow("", "size"),
        outputRow("Bad From", "n"),
        outputRow("end", NEW_COLUMN, ""),
        outputRow("end.x", "email"),
        outputRow("end.y", "email"),
      ],
      dependsOn: [],
    });
    const rows = f.outputs.map((r) => r.key);
    const errors = validateGroupForm(table, f, {
      inputs: [
        { name: "n", required: true },
        { name: "flag", required: true },
      ],
      outputIds: null,
      blockIds: ["end"],
    });
    expect(errors.name).toBeDefined();
    expect(errors.id).toMatch(/already/);
    expect(errors.source).toBeDefined();
    expect(errors[groupField.input("flag")]).toBe("Required input");
    expect(errors[groupField.input("n")]).toBeUndefined();
    expect(errors[groupField.outputFrom(rows[0] ?? "")]).toBeDefined();
    expect(errors[groupField.outputColumn(rows[0] ?? "")]).toMatch(/Classify/);
    expect(errors[groupField.outputFrom(rows[1] ?? "")]).toMatch(/blockId/);
    expect(errors[groupField.outputColumn(rows[1] ?? "")]).toMatch(/reads this column/);
    expect(errors[groupField.outputColumn(rows[2] ?? "")]).toMatch(/Name/);
    expect(errors[groupField.outputColumn(rows[3] ?? "")]).toBeUndefined();
    expect(errors[groupField.outputColumn(rows[4] ?? "")]).toMatch(/Another output/);
  });

  it("accepts an edited group as it was, and checks enrichment outputs by id", () => {
    expect(
      validateGroupForm(table, groupFormFrom(classify), {
        editingId: "classify",
        inputs: [{ name: "n", required: true }],
        outputIds: null,
        blockIds: ["big", "small"],
      }),
    ).toEqual({});
    const f = form({
      name: "D",
      id: "d",
      kind: "enrichment",
      enrichmentId: "email_domain",
      inputs: { email: "email" },
      outputs: [outputRow("nope", NEW_COLUMN, "X")],
    });
    const errors = validateGroupForm(table, f, {
      inputs: [{ name: "email", required: true }],
      outputIds: ["domain", "is_free"],
    });
    expect(Object.values(errors)).toEqual(["Not an output of this enrichment"]);
  });

  it("defaults dependencies to the mapped input columns, minus own outputs", () => {
    const f = form({ inputs: { b: "n", a: "email", c: "" }, outputs: [outputRow("x", "email")] });
    expect(defaultDependsOn(f, columns, null)).toEqual(["n"]);
    expect(defaultDependsOn(form({ inputs: { b: "n", a: "email" } }), columns, ["a"])).toEqual([
      "email",
    ]);
  });

  it("guesses input columns, keeping mappings that still apply", () => {
    const guessed = suggestInputs(
      [
        { name: "email", required: true },
        { name: "company_name", required: false },
        { name: "n", required: false },
        { name: "zzz", required: false },
      ],
      [...columns, { id: "company", name: "Company name", type: "text" }],
      { n: "size" },
    );
    expect(guessed).toEqual({ email: "email", company_name: "company", n: "size", zzz: "" });
  });

  it("picks end blocks for workflow outputs", () => {
    const blocks = [
      { id: "double", next: "check" },
      { id: "check", next: { true: "big", false: "small" } },
      { id: "big" },
      { id: "small" },
    ];
    expect(terminalBlockIds(blocks)).toEqual(["big", "small"]);
    expect(defaultFrom(blocks, [])).toBe("big");
    expect(defaultFrom(blocks, ["big"])).toBe("small");
    expect(defaultFrom(blocks, ["big", "small"])).toBe("double");
  });

  it("fills the form when a workflow is picked", () => {
    const picked = applyWorkflowChoice(
      form({}),
      {
        name: "Classify",
        definition: {
          inputs: [{ name: "n", type: "number", required: true }],
          blocks: [{ id: "double", next: "big" }, { id: "big" }],
        },
      },
      columns,
    );
    expect(picked.name).toBe("Classify");
    expect(picked.inputs).toEqual({ n: "n" });
    expect(picked.outputs).toHaveLength(1);
    expect(picked.outputs[0]).toMatchObject({
      from: "big",
      column: NEW_COLUMN,
      newName: "Classify",
    });
  });

  it("fills the form when an enrichment is picked, and adds all outputs once", () => {
    const picked = applyEnrichmentChoice(form({ kind: "enrichment" }), emailDomain, columns);
    expect(picked.name).toBe("E-mail domain");
    expect(picked.enrichmentId).toBe("email_domain");
    expect(picked.inputs).toEqual({ email: "email" });
    expect(picked.outputs.map((r) => r.from)).toEqual(["domain"]);
    const all = addAllEnrichmentOutputs(picked, emailDomain, columns);
    expect(all.map((r) => r.from)).toEqual(["domain", "is_free"]);
    expect(addAllEnrichmentOutputs({ ...picked, outputs: all }, emailDomain, columns)).toHaveLength(
      2,
    );
    const patch = buildGroupPatch(
      { columns, groups: [] },
      { ...picked, id: "domain", outputs: all },
      { inputNames: ["email"], enrichment: emailDomain },
    );
    expect(patch.body.columns.slice(columns.length).map((c) => c.type)).toEqual([
      "text",
      "boolean",
    ]);
    expect(serverIssues(patch.body)).toEqual([]);
  });

  it("names new output columns without clashing", () => {
    expect(suggestOutputName("linkedin_url", "Company", ["Name"])).toBe("Linkedin url");
    expect(suggestOutputName("name", "Company", ["Name"])).toBe("Company name");
    expect(suggestOutputName("name", "Company", ["Name", "company name"])).toBe("Company name 2");
  });
});

describe("group editor: run conditions", () => {
  it("keeps a group's run conditions through the form, and drops an emptied list from the body", () => {
    const gated: Group = { ...classify, runIf: [{ column: "stage", op: "eq", value: "lead" }] };
    const t = { columns, groups: [gated] };
    const f = groupFormFrom(gated);
    expect(f.runIf).toEqual(gated.runIf);
    const patch = buildGroupPatch(t, f, { editingId: "classify", inputNames: ["n"] });
    expect(patch.body.groups[0]?.runIf).toEqual([{ column: "stage", op: "eq", value: "lead" }]);
    expect(serverIssues(patch.body)).toEqual([]);
    const cleared = buildGroupPatch(
      t,
      { ...f, runIf: [] },
      { editingId: "classify", inputNames: ["n"] },
    );
    expect(cleared.body.groups[0]).not.toHaveProperty("runIf");
  });

  it("flags a condition on the group's own output or a column gone, as the API would", () => {
    const f = form({
      name: "G",
      id: "g",
      workflowId: "wf",
      outputs: [outputRow("a", "email")],
      runIf: [{ column: "email", op: "not_empty" }],
    });
    const opts = { inputs: [], outputIds: null };
    expect(validateGroupForm(table, f, opts).runIf).toMatch(/own output/);
    const gone = { ...f, runIf: [{ column: "ghost", op: "empty" as const }] };
    expect(validateGroupForm(table, gone, opts).runIf).toMatch(/no longer exists/);
    const patch = buildGroupPatch(table, f, { inputNames: null });
    const split = groupIssues(serverIssues(patch.body), patch);
    expect(split.fields.runIf).toMatch(/own output column/);
  });
});

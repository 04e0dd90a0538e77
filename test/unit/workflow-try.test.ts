/**
 * "Try it" and "Use in a table…" in the workflow editor, without a browser: typed inputs
 * read as JSON when they parse, the test request runs the unsaved draft only when there
 * is one that parses, paid blocks are named before `allowPaid` is sent, the refusal that
 * asks for it is recognised; the table dialog's defaults (inputs by id or name, one
 * output per terminal block), its checks, and a PATCH body that keeps every existing
 * column and group and adds a uniquely named group.
 */
import { describe, expect, it } from "vitest";
import { PatchTableRequest, type TableView } from "@/contracts/table";
import { ApiError } from "@/ui/api";
import {
  asksAllowPaid,
  blockRunsOf,
  buildTestBody,
  inputsFrom,
  paidBlocks,
  parseInputValue,
  rowLabel,
} from "@/ui/workflows/try-request";
import {
  buildUseInTablePatch,
  defaultForm,
  defaultInputMapping,
  freeColumns,
  groupIdFor,
  NEW_COLUMN,
  terminalBlocks,
  validateForm,
} from "@/ui/workflows/use-in-table-plan";

const DEFINITION = {
  inputs: [
    { name: "domain", type: "text", required: true },
    { name: "limit", type: "number" },
  ],
  blocks: [
    { id: "look", type: "enrichment", enrichmentId: "company_lookup", inputs: {}, next: "check" },
    { id: "check", type: "condition", expression: "true", next: { true: "big", false: "small" } },
    { id: "big", type: "transform", expression: "'big'", name: "Big one" },
    { id: "small", type: "llm", model: "gpt-x", prompt: "hi", next: [] },
  ],
};

describe("the test request", () => {
  it("typed inputs are JSON when they parse, text otherwise, and blank ones are left out", () => {
    expect(parseInputValue("42")).toBe(42);
    expect(parseInputValue('{"a":[1]}')).toEqual({ a: [1] });
    expect(parseInputValue("true")).toBe(true);
    expect(parseInputValue('"quoted"')).toBe("quoted");
    expect(parseInputValue("acme.test")).toBe("acme.test");
    expect(parseInputValue("  ")).toBeUndefined();
    expect(inputsFrom(["a", "b", "c"], { a: "1", b: "" })).toEqual({ a: 1 });
  });

  it("sends the unsaved definition only when the draft has changes and parses; else the saved draft (live, even through a group on deployed)", () => {
    const target = { mode: "inputs" as const, inputs: { n: 1 } };
    expect(
      buildTestBody({ target, dirty: true, definition: DEFINITION, allowPaid: false }),
    ).toEqual({
      inputs: { n: 1 },
      definition: DEFINITION,
    });
    expect(
      buildTestBody({ target, dirty: false, definition: DEFINITION, allowPaid: false }),
    ).toEqual({
      inputs: { n: 1 },
      version: "live",
    });
    expect(buildTestBody({ target, dirty: true, definition: null, allowPaid: true })).toEqual({
      inputs: { n: 1 },
      version: "live",
      allowPaid: true,
    });
    const row = { mode: "row" as const, tableId: "t1", groupId: "g", rowId: "r1" };
    const body = buildTestBody({ target: row, dirty: false, definition: null, allowPaid: false });
    expect(body).toEqual({ tableId: "t1", groupId: "g", rowId: "r1", version: "live" });
  });

  it("names the enrichment and llm blocks as paid, and nothing for a free definition", () => {
    expect(paidBlocks(DEFINITION)).toEqual([
      "look (enrichment company_lookup)",
      "small (llm gpt-x)",
    ]);
    expect(paidBlocks({ blocks: [{ id: "a", type: "transform", expression: "1" }] })).toEqual([]);
    expect(paidBlocks(null)).toEqual([]);
    expect(paidBlocks({ blocks: "no" })).toEqual([]);
  });

  it("recognises the 400 asking for allowPaid, and no other refusal", () => {
    const paid = new ApiError(400, "validation_failed", "paid", [
      { path: "allowPaid", message: "the workflow has paid blocks" },
    ]);
    expect(asksAllowPaid(paid)).toBe(true);
    expect(
      asksAllowPaid(new ApiError(400, "validation_failed", "x", [{ path: "rowId", message: "" }])),
    ).toBe(false);
    expect(asksAllowPaid(new ApiError(404, "not_found", "x"))).toBe(false);
    expect(asksAllowPaid(new Error("x"))).toBe(false);
  });

  it("the answer's blocks become the graph's results by block id", () => {
    const runs = blockRunsOf({
      blocks: [
        { id: "a", status: "completed", output: 2, error: null, durationMs: 3 },
        { id: "b", status: "error", output: null, error: "boom", durationMs: 1 },
      ],
    });
    expect(runs).toEqual({
      a: { status: "completed", output: 2, error: null, durationMs: 3 },
      b: { status: "error", output: null, error: "boom", durationMs: 1 },
    });
  });

  it("a row's label is its 1-based position and its first non-empty values", () => {
    const columns = [{ id: "a" }, { id: "b" }, { id: "c" }];
    expect(rowLabel({ position: 2, data: { a: "", b: "Acme", c: { x: 1 } } }, columns)).toBe(
      '#3 · Acme · {"x":1}',
    );
    expect(rowLabel({ position: 0, data: {} }, columns)).toBe("#1");
  });
});

const TABLE: Pick<TableView, "columns" | "groups"> = {
  columns: [
    { id: "domain", name: "Domain", type: "text" },
    { id: "max_rows", name: "Limit", type: "number" },
    { id: "size", name: "Size", type: "text" },
    { id: "notes", name: "Notes", type: "text" },
  ],
  groups: [
    {
      id: "lookup",
      name: "Lookup",
      kind: "workflow",
      workflowId: "w0",
      version: "live",
      inputs: { domain: "domain" },
      outputs: [{ columnId: "size", from: "x" }],
      dependsOn: [],
      autoRun: false,
    },
  ],
};

describe("use in a table", () => {
  it("terminal blocks are those whose next leads nowhere", () => {
    expect(terminalBlocks(DEFINITION)).toEqual([
      { id: "big", name: "Big one" },
      { id: "small", name: null },
    ]);
    expect(terminalBlocks({ blocks: [{ id: "c", type: "condition", next: {} }] })).toEqual([
      { id: "c", name: null },
    ]);
  });

  it("maps each input to the column of the same id, else the same name; none when neither", () => {
    expect(defaultInputMapping(["domain", "limit", "other"], TABLE.columns)).toEqual({
      domain: "domain",
      limit: "max_rows",
      other: "",
    });
  });

  it("the form opens named after the workflow, deployed when there is a deployed version, outputs to new columns", () => {
    const form = defaultForm({
      definition: DEFINITION,
      workflowName: "Lookup",
      deployed: true,
      table: TABLE,
    });
    expect(form.groupName).toBe("Lookup");
    expect(form.version).toBe("deployed");
    expect(form.autoRun).toBe(false);
    expect(form.outputs.map((o) => [o.from, o.column, o.newName])).toEqual([
      ["big", NEW_COLUMN, "Big one"],
      ["small", NEW_COLUMN, "small"],
    ]);
    expect(
      defaultForm({ definition: DEFINITION, workflowName: "x", deployed: false, table: TABLE })
        .version,
    ).toBe("live");
  });

  it("a group id is a slug of the name unique among the table's groups", () => {
    expect(groupIdFor("Lookup", TABLE.groups)).toBe("lookup_2");
    expect(groupIdFor("Find the size!", TABLE.groups)).toBe("find_the_size");
    expect(groupIdFor("42", [])).toBe("group_42");
  });

  it("outputs can go only to columns no group fills", () => {
    expect(freeColumns(TABLE).map((c) => c.id)).toEqual(["domain", "max_rows", "notes"]);
  });

  it("checks before sending: a required input unmapped, an unknown block, a taken or read column", () => {
    const form = defaultForm({
      definition: DEFINITION,
      workflowName: "",
      deployed: false,
      table: TABLE,
    });
    form.inputs.domain = "";
    form.outputs = [
      { key: "a", from: "nope", column: "notes", newName: "", newType: "json" },
      { key: "b", from: "big", column: "size", newName: "", newType: "json" },
      { key: "c", from: "big.x", column: "max_rows", newName: "", newType: "json" },
      { key: "d", from: "Bad From", column: NEW_COLUMN, newName: " ", newType: "json" },
    ];
    expect(validateForm(form, TABLE, DEFINITION)).toEqual({
      groupName: "Give the group a name",
      "input:domain": "Required input",
      "from:a": "The workflow has no block “nope”",
      "column:b": "Already filled by the group “Lookup”",
      "column:c": "The group reads this column as an input",
      "from:d": "Use <blockId> or <blockId>.<path>",
      "column:d": "Name the new column",
    });
  });

  it("the PATCH body keeps every column and group, appends the new columns and the group, and is a valid request", () => {
    const form = defaultForm({
      definition: DEFINITION,
      workflowName: "Lookup",
      deployed: false,
      table: TABLE,
    });
    form.outputs[0] = {
      key: "o0",
      from: "big",
      column: NEW_COLUMN,
      newName: "Size",
      newType: "text",
    };
    form.outputs[1] = { key: "o1", from: "small", column: "notes", newName: "", newType: "json" };
    form.autoRun = true;
    const { body, groupId } = buildUseInTablePatch(TABLE, form, {
      id: "w1",
      definition: DEFINITION,
    });
    expect(groupId).toBe("lookup_2");
    expect(body.columns.slice(0, 4)).toEqual(TABLE.columns);
    // "Size" is taken as an id by the column `size`: the new one gets the next free id.
    expect(body.columns[4]).toEqual({ id: "size_2", name: "Size", type: "text" });
    expect(body.groups[0]).toEqual(TABLE.groups[0]);
    expect(body.groups[1]).toEqual({
      id: "lookup_2",
      name: "Lookup",
      kind: "workflow",
      workflowId: "w1",
      version: "live",
      inputs: { domain: "domain", limit: "max_rows" },
      outputs: [
        { columnId: "size_2", from: "big" },
        { columnId: "notes", from: "small" },
      ],
      dependsOn: ["domain"],
      autoRun: true,
    });
    expect(PatchTableRequest.safeParse(body).success).toBe(true);
  });
});

import { describe, expect, it } from "vitest";
import { TableSchema } from "../../src/contracts/table";
import { WorkflowDefinition } from "../../src/contracts/workflow";
import { formatDuration } from "../../src/domain/durations";
import { findCycle } from "../../src/domain/graph";
import { newId } from "../../src/domain/ids";
import { CELL_STATUSES, isInFlight, isTerminal } from "../../src/domain/statuses";
import { checkTableSchema } from "../../src/domain/table-schema";
import { parseTemplate } from "../../src/domain/templates";
import { checkRowData, isEmptyValue } from "../../src/domain/values";
import { checkWorkflowDefinition, entryBlock } from "../../src/domain/workflow-graph";

describe("statuses", () => {
  it("every status is exactly one of in flight or terminal", () => {
    for (const s of CELL_STATUSES) expect(isInFlight(s)).toBe(!isTerminal(s));
    expect(CELL_STATUSES.filter(isInFlight)).toEqual(["queued", "running", "paused"]);
  });
});

describe("durations", () => {
  it("read like a person would say them", () => {
    expect([300, 45_000, 15 * 60_000, 6 * 3_600_000].map(formatDuration)).toEqual([
      "300 ms",
      "45 s",
      "15 min",
      "6 h",
    ]);
  });
});

describe("ids", () => {
  it("sort by creation time and do not collide", () => {
    const ids = Array.from({ length: 2000 }, () => newId("row"));
    expect(new Set(ids).size).toBe(ids.length);
    const a = newId("x");
    const later = new Promise<string>((r) => setTimeout(() => r(newId("x")), 5));
    return later.then((b) => expect(a < b).toBe(true));
  });
});

describe("graph", () => {
  it("finds a cycle and returns its nodes", () => {
    const edges: Record<string, string[]> = { a: ["b"], b: ["c"], c: ["a"], d: [] };
    expect(findCycle(Object.keys(edges), (n) => edges[n] ?? [])).toEqual(["a", "b", "c", "a"]);
    expect(findCycle(["a", "b"], (n) => (n === "a" ? ["b"] : []))).toBeNull();
  });
});

describe("workflow definitions", () => {
  const parse = (blocks: unknown[]) => WorkflowDefinition.parse({ blocks });
  it("a condition's ports count as edges; the entry is the block nobody points to", () => {
    const def = parse([
      { id: "c", type: "condition", expression: "true", next: { true: "y", false: "n" } },
      { id: "y", type: "transform", expression: "1" },
      { id: "n", type: "transform", expression: "2" },
    ]);
    expect(checkWorkflowDefinition(def)).toEqual([]);
    expect(entryBlock(def)?.id).toBe("c");
  });
  it("parallel next lists and joins are fine", () => {
    const def = parse([
      { id: "a", type: "transform", expression: "1", next: ["b", "c"] },
      { id: "b", type: "transform", expression: "2", next: "d" },
      { id: "c", type: "transform", expression: "3", next: "d" },
      { id: "d", type: "transform", expression: "blocks.b + blocks.c" },
    ]);
    expect(checkWorkflowDefinition(def)).toEqual([]);
  });
  it("templates split into literals and expressions", () => {
    expect(parseTemplate("a{{ x }}b{{y}}")).toEqual([
      { literal: "a", expression: "x" },
      { literal: "b", expression: "y" },
      { literal: "" },
    ]);
  });
});

describe("table schemas", () => {
  const schema = (groups: unknown[]) =>
    TableSchema.parse({
      columns: [
        { id: "a", name: "A", type: "text" },
        { id: "b", name: "B", type: "text" },
        { id: "c", name: "C", type: "text" },
      ],
      groups,
    });
  const g = (id: string, reads: string[], writes: string[]) => ({
    id,
    name: id,
    kind: "workflow",
    workflowId: "wf",
    dependsOn: reads,
    outputs: writes.map((w) => ({ columnId: w, from: "x" })),
  });
  it("a chain is valid; a loop through inputs is a cycle", () => {
    expect(
      checkTableSchema(schema([g("one", ["a"], ["b"]), g("two", ["b"], ["c"])]), new Set()),
    ).toEqual([]);
    const loop = checkTableSchema(
      schema([g("one", ["c"], ["b"]), g("two", ["b"], ["c"])]),
      new Set(),
    );
    expect(loop.map((i) => i.message).join()).toMatch(/dependency cycle/);
  });
});

describe("row values", () => {
  const columns = TableSchema.parse({
    columns: [
      { id: "n", name: "N", type: "number" },
      { id: "d", name: "D", type: "date" },
    ],
    groups: [],
  }).columns;
  it("null clears any column; types are enforced", () => {
    expect(checkRowData(columns, { n: null, d: null }, "data")).toEqual([]);
    expect(checkRowData(columns, { n: 1, d: "2026-12-02T10:00:00Z" }, "data")).toEqual([]);
    expect(checkRowData(columns, { n: "1" }, "data")).toHaveLength(1);
    expect(checkRowData(columns, { d: "2026-13-45" }, "data")).toHaveLength(1);
  });
  it("empty means absent, null, empty string, false, [] or {}", () => {
    for (const v of [undefined, null, "", false, [], {}]) expect(isEmptyValue(v)).toBe(true);
    for (const v of [0, "x", true, [0], { a: 1 }]) expect(isEmptyValue(v)).toBe(false);
  });
});

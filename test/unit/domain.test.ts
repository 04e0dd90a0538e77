import { describe, expect, it } from "vitest";
import { TableSchema } from "@/contracts/table";
import { WorkflowDefinition } from "@/contracts/workflow";
import { importValue } from "@/domain/csv-columns";
import { digestOf } from "@/domain/digest";
import { formatDuration } from "@/domain/durations";
import { findCycle } from "@/domain/graph";
import { newId } from "@/domain/ids";
import { CELL_STATUSES, isInFlight, isTerminal } from "@/domain/statuses";
import { checkTableSchema } from "@/domain/table-schema";
import { parseTemplate } from "@/domain/templates";
import {
  checkRowData,
  isEmptyValue,
  jsonDeeperThan,
  jsonValueIssues,
  MAX_JSON_DEPTH,
} from "@/domain/values";
import { checkWorkflowDefinition, entryBlock } from "@/domain/workflow-graph";

describe("statuses", () => {
  it("every status is exactly one of in flight or terminal", () => {
    for (const s of CELL_STATUSES) expect(isInFlight(s)).toBe(!isTerminal(s));
    expect(CELL_STATUSES.filter(isInFlight)).toEqual(["queued", "running", "paused"]);
  });
});

describe("digests (a resumed foreach reuses an item's record only for the same item)", () => {
  it("equal values digest alike whatever the order of their keys; different ones do not", () => {
    expect(digestOf({ a: 1, b: { c: [1, { d: 2, e: 3 }] } })).toBe(
      digestOf({ b: { c: [1, { e: 3, d: 2 }] }, a: 1 }),
    );
    expect(digestOf({ a: 1 })).not.toBe(digestOf({ a: "1" }));
    expect(digestOf([1, 2])).not.toBe(digestOf([2, 1]));
    expect(digestOf(null)).toBe(digestOf(undefined));
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

describe("JSON depth, checked on the text before parsing", () => {
  const nested = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
  it("counts arrays and objects inside each other, not brackets inside strings", () => {
    expect(jsonDeeperThan(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(jsonDeeperThan(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(jsonDeeperThan(`{"a":${nested(99)}}`, 100)).toBe(false);
    expect(jsonDeeperThan(`{"a":{"b":${nested(99)}}}`, 100)).toBe(true);
    expect(jsonDeeperThan(JSON.stringify({ s: "[[[[[[{{{{" }), 2)).toBe(false);
    // An escaped quote does not end the string.
    expect(jsonDeeperThan(JSON.stringify({ s: '\\"[[[[' }), 1)).toBe(false);
    // Siblings do not add up.
    expect(jsonDeeperThan("[[1],[2],[3],[4]]", 2)).toBe(false);
  });

  it("a million levels are measured without overflowing the stack", () => {
    expect(jsonDeeperThan(nested(1_000_000), MAX_JSON_DEPTH)).toBe(true);
  });
});

describe("JSON values that would not survive storage", () => {
  it("NUL, unpaired surrogates and __proto__ keys are reported with their paths", () => {
    const value = JSON.parse(
      '{"a":["ok","x\\u0000"],"b":{"__proto__":{"deep":1}},"c\\ud800":1,"d":"\\udc00"}',
    );
    const issues = jsonValueIssues(value, "data");
    expect(issues.map((i) => i.path).sort()).toEqual([
      "data.a.1",
      "data.b.__proto__",
      "data.c\ud800",
      "data.d",
    ]);
    expect(issues.find((i) => i.path === "data.a.1")?.message).toMatch(/NUL/);
    expect(issues.find((i) => i.path === "data.b.__proto__")?.message).toMatch(/__proto__/);
  });

  it("ordinary hostile text is fine: quotes, emoji, RTL, constructor keys", () => {
    const value = { constructor: "'; drop table rows; --", emoji: ["😀", "\u202Eabc"], e: "" };
    expect(jsonValueIssues(value)).toEqual([]);
  });
});

describe("CSV json cells", () => {
  const column = { id: "j", name: "J", type: "json" } as const;
  it("a cell nested beyond 100 levels, or with a __proto__ key, is refused, not dropped or overflowed", () => {
    const deep = `${"[".repeat(5_000)}${"]".repeat(5_000)}`;
    expect(importValue(column, deep)).toEqual({
      ok: false,
      reason: "must nest at most 100 levels deep",
    });
    const proto = importValue(column, '{"a":{"__proto__":{"x":1}}}');
    expect(proto.ok).toBe(false);
    expect(proto.ok ? "" : proto.reason).toMatch(/^at a\.__proto__: .*__proto__/);
    expect(importValue(column, '{"constructor":"=1"}')).toEqual({
      ok: true,
      value: { constructor: "=1" },
    });
  });
});

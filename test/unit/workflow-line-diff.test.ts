import { describe, expect, it } from "vitest";
import {
  collapseUnchanged,
  type DiffLine,
  definitionDiff,
  lineDiff,
  stableJson,
} from "@/ui/workflows/line-diff";

const ops = (lines: DiffLine[]) => lines.map((l) => `${l.op[0]}${l.text}`);

describe("stableJson", () => {
  it("prints objects with the same keys the same way whatever order they were written in", () => {
    const a = { blocks: [{ type: "transform", expression: "1", id: "a" }], inputs: [] };
    const b = { inputs: [], blocks: [{ id: "a", expression: "1", type: "transform" }] };
    expect(stableJson(a)).toBe(stableJson(b));
  });

  it("puts id, name and type first, the other keys alphabetically, and keeps array order", () => {
    const text = stableJson({ z: 1, type: "t", a: [3, 1, 2], id: "x", name: "n" });
    expect(Object.keys(JSON.parse(text))).toEqual(["id", "name", "type", "a", "z"]);
    expect(JSON.parse(text).a).toEqual([3, 1, 2]);
    expect(text.split("\n")[1]).toBe('  "id": "x",');
  });
});

describe("lineDiff", () => {
  it("identical texts are all unchanged lines", () => {
    expect(ops(lineDiff(["a", "b"], ["a", "b"]))).toEqual(["sa", "sb"]);
  });

  it("marks lines only in before as removed and only in after as added, keeping the common ones", () => {
    expect(ops(lineDiff(["a", "b", "c", "d"], ["a", "x", "c", "d", "e"]))).toEqual([
      "sa",
      "rb",
      "ax",
      "sc",
      "sd",
      "ae",
    ]);
  });

  it("keeps the longest common subsequence, not just the common head and tail", () => {
    const result = lineDiff(["p", "a", "b", "c", "q"], ["r", "a", "c", "b", "c", "s"]);
    expect(result.filter((l) => l.op === "same").map((l) => l.text)).toEqual(["a", "b", "c"]);
    // Every line of each side is there, in its order.
    expect(result.filter((l) => l.op !== "added").map((l) => l.text)).toEqual([
      "p",
      "a",
      "b",
      "c",
      "q",
    ]);
    expect(result.filter((l) => l.op !== "removed").map((l) => l.text)).toEqual([
      "r",
      "a",
      "c",
      "b",
      "c",
      "s",
    ]);
  });

  it("an empty side is all added or all removed", () => {
    expect(ops(lineDiff([], ["a"]))).toEqual(["aa"]);
    expect(ops(lineDiff(["a"], []))).toEqual(["ra"]);
  });

  it("a wholesale rewrite too large for the table is shown as removed then added", () => {
    const before = Array.from({ length: 2_500 }, (_, i) => `old ${i}`);
    const after = Array.from({ length: 2_500 }, (_, i) => `new ${i}`);
    const result = lineDiff(["head", ...before, "tail"], ["head", ...after, "tail"]);
    expect(result).toHaveLength(5_002);
    expect(result[0]).toEqual({ op: "same", text: "head" });
    expect(result[1]).toEqual({ op: "removed", text: "old 0" });
    expect(result[2_501]).toEqual({ op: "added", text: "new 0" });
    expect(result[5_001]).toEqual({ op: "same", text: "tail" });
  });
});

describe("collapseUnchanged", () => {
  const same = (n: number, from = 0): DiffLine[] =>
    Array.from({ length: n }, (_, i) => ({ op: "same", text: `s${from + i}` }));

  it("folds a long unchanged run between changes, keeping context lines on each side", () => {
    const lines: DiffLine[] = [
      { op: "removed", text: "r" },
      ...same(10),
      { op: "added", text: "a" },
    ];
    expect(collapseUnchanged(lines, 2)).toEqual([
      { op: "removed", text: "r" },
      { op: "same", text: "s0" },
      { op: "same", text: "s1" },
      { op: "skipped", count: 6 },
      { op: "same", text: "s8" },
      { op: "same", text: "s9" },
      { op: "added", text: "a" },
    ]);
  });

  it("folds the leading and trailing runs up to the context next to the change", () => {
    const lines: DiffLine[] = [...same(6), { op: "added", text: "a" }, ...same(6, 6)];
    expect(collapseUnchanged(lines, 1)).toEqual([
      { op: "skipped", count: 5 },
      { op: "same", text: "s5" },
      { op: "added", text: "a" },
      { op: "same", text: "s6" },
      { op: "skipped", count: 5 },
    ]);
  });

  it("keeps short runs whole: a fold hides at least two lines", () => {
    const lines: DiffLine[] = [{ op: "added", text: "a" }, ...same(3), { op: "added", text: "b" }];
    expect(collapseUnchanged(lines, 1)).toEqual(lines);
  });
});

describe("definitionDiff", () => {
  it("a changed expression is one removed and one added line; key order alone changes nothing", () => {
    const version = {
      inputs: [],
      blocks: [
        { id: "a", type: "transform", expression: "1", next: "b" },
        { id: "b", type: "transform", expression: "'old'" },
      ],
    };
    const draft = {
      blocks: [
        { next: "b", expression: "1", type: "transform", id: "a" },
        { id: "b", type: "transform", expression: "'new'" },
      ],
      inputs: [],
    };
    const diff = definitionDiff(version, draft, 1);
    expect([diff.added, diff.removed]).toEqual([1, 1]);
    const changed = diff.rows.filter((r) => r.op === "added" || r.op === "removed");
    expect(changed).toEqual([
      { op: "removed", text: `      "expression": "'old'"` },
      { op: "added", text: `      "expression": "'new'"` },
    ]);
    expect(diff.rows.some((r) => r.op === "skipped")).toBe(true);
    expect(definitionDiff(version, structuredClone(version))).toMatchObject({
      added: 0,
      removed: 0,
    });
  });
});

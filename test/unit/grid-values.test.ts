/** Inline edits are checked against the column's type before they are sent. */
import { describe, expect, it } from "vitest";
import { checkValue } from "@/domain/values";
import { checkEdit, displayValue, parseInput } from "@/ui/grid/values";

describe("an edit typed into a cell", () => {
  it("becomes a number only when it is one", () => {
    expect(parseInput({ type: "number" }, " 42 ")).toEqual({ ok: true, value: 42 });
    expect(parseInput({ type: "number" }, "-3.5e2")).toEqual({ ok: true, value: -350 });
    expect(parseInput({ type: "number" }, "12abc").ok).toBe(false);
    expect(parseInput({ type: "number" }, "Infinity").ok).toBe(false);
  });

  it("clears the cell when emptied, whatever the type", () => {
    for (const type of ["text", "number", "boolean", "date", "json"] as const)
      expect(parseInput({ type }, "  ")).toEqual({ ok: true, value: null });
  });

  it("keeps text exactly as typed, hostile characters included", () => {
    const hostile = "'; drop table rows; -- =1+1 🙂";
    expect(parseInput({ type: "text" }, hostile)).toEqual({ ok: true, value: hostile });
  });

  it("takes exactly the dates the API takes, to the last fractional digit", () => {
    const column = { id: "d", name: "D", type: "date" } as const;
    for (const text of [
      "2026-12-02",
      "2026-12-02T10:30",
      "2026-12-02T10:30:15Z",
      "2026-12-02T10:30:15.123456789+02:00",
      "2026-12-02T10:30:15.1234567890Z",
      "2026-12-02 10:30",
      "2026-13-45",
    ]) {
      const grid = parseInput({ type: "date" }, text).ok;
      expect(grid, text).toBe(checkValue(column, text) === null);
    }
    expect(parseInput({ type: "date" }, "2026-12-02T10:30:15.1234567890Z").ok).toBe(false);
  });

  it("accepts booleans, ISO dates, JSON and select options, and says what it expects otherwise", () => {
    expect(parseInput({ type: "boolean" }, "Yes")).toEqual({ ok: true, value: true });
    expect(parseInput({ type: "date" }, "2026-12-02")).toEqual({ ok: true, value: "2026-12-02" });
    const badDate = parseInput({ type: "date" }, "2026-13-45");
    expect(badDate.ok).toBe(false);
    expect(parseInput({ type: "json" }, '{"a":[1]}')).toEqual({ ok: true, value: { a: [1] } });
    const badJson = parseInput({ type: "json" }, "{a:1}");
    expect(badJson.ok ? "" : badJson.message).toContain("JSON");
    expect(parseInput({ type: "select", options: ["a", "b"] }, "b")).toEqual({
      ok: true,
      value: "b",
    });
    const notAnOption = parseInput({ type: "select", options: ["a", "b"] }, "c");
    expect(notAnOption.ok ? "" : notAnOption.message).toContain("a, b");
  });

  it("reads back stored values as text", () => {
    expect(displayValue(null)).toBe("");
    expect(displayValue(false)).toBe("false");
    expect(displayValue({ a: 1 })).toBe('{"a":1}');
  });
});

describe("a cell's draft against the value stored", () => {
  it("is refused with the type's message when it does not fit", () => {
    expect(checkEdit({ type: "number" }, "12abc", 3)).toEqual({
      kind: "invalid",
      message: "Enter a number, e.g. 42 or -3.5",
    });
  });

  it("sends nothing when it reads the same as the stored value", () => {
    expect(checkEdit({ type: "number" }, " 42 ", 42)).toEqual({ kind: "unchanged" });
    expect(checkEdit({ type: "json" }, '{"a":1}', { a: 1 })).toEqual({ kind: "unchanged" });
    // An empty cell emptied again.
    expect(checkEdit({ type: "text" }, "", undefined)).toEqual({ kind: "unchanged" });
  });

  it("saves the parsed value otherwise, null for a cleared cell", () => {
    expect(checkEdit({ type: "number" }, "43", 42)).toEqual({ kind: "save", value: 43 });
    expect(checkEdit({ type: "boolean" }, "yes", false)).toEqual({ kind: "save", value: true });
    expect(checkEdit({ type: "text" }, " ", "x")).toEqual({ kind: "save", value: null });
  });
});

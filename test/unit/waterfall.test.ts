import { describe, expect, it } from "vitest";
import {
  canPause,
  isEmptyAnswer,
  judgeAnswer,
  passesCheck,
  validationValueProblem,
  waterfallEnd,
} from "@/domain/waterfall";

describe("a waterfall step's answer", () => {
  it("is empty when every mapped output is empty, whatever the checks", () => {
    expect(judgeAnswer({ name: null, size: " " }, undefined, "name")).toBe("empty");
    expect(judgeAnswer({ name: [] }, [{ output: "name", op: "empty" }], "name")).toBe("empty");
    expect(judgeAnswer({}, undefined, "name")).toBe("empty");
  });

  it("by default wins when the group's first output is not empty", () => {
    expect(judgeAnswer({ name: "Acme", size: null }, undefined, "name")).toBe("found");
    expect(judgeAnswer({ name: null, size: "10" }, undefined, "name")).toBe("rejected");
  });

  it("with checks, wins only when every check holds", () => {
    const checks = [
      { output: "name", op: "contains" as const, value: "inc" },
      { output: "size", op: "gte" as const, value: 10 },
    ];
    expect(judgeAnswer({ name: "Acme Inc", size: "12" }, checks, "name")).toBe("found");
    expect(judgeAnswer({ name: "Acme Inc", size: "9" }, checks, "name")).toBe("rejected");
    expect(judgeAnswer({ name: "Acme", size: "12" }, checks, "name")).toBe("rejected");
  });
});

describe("the checks' operators", () => {
  it("compare numbers as numbers, text as text, and never match an empty answer", () => {
    expect(passesCheck("10", { output: "x", op: "gt", value: 9 })).toBe(true);
    expect(passesCheck(10, { output: "x", op: "eq", value: "10" })).toBe(true);
    expect(passesCheck("2024-05-01", { output: "x", op: "lt", value: "2024-06-01" })).toBe(true);
    expect(passesCheck(null, { output: "x", op: "lt", value: 5 })).toBe(false);
    expect(passesCheck(null, { output: "x", op: "eq", value: "a" })).toBe(false);
    expect(passesCheck(null, { output: "x", op: "neq", value: "a" })).toBe(true);
    expect(passesCheck("ACME", { output: "x", op: "contains", value: "cm" })).toBe(true);
    expect(passesCheck(["a", "b"], { output: "x", op: "contains", value: "b" })).toBe(true);
    expect(passesCheck({}, { output: "x", op: "empty" })).toBe(true);
    expect(passesCheck(0, { output: "x", op: "not_empty" })).toBe(true);
    expect(isEmptyAnswer(false)).toBe(false);
  });

  it("say what value an operator needs", () => {
    expect(validationValueProblem({ output: "x", op: "empty", value: 1 })).toMatch(
      /takes no value/,
    );
    expect(validationValueProblem({ output: "x", op: "eq" })).toMatch(/needs a value/);
    expect(validationValueProblem({ output: "x", op: "contains", value: "" })).toMatch(/non-empty/);
    expect(validationValueProblem({ output: "x", op: "gt", value: 3 })).toBeNull();
  });
});

describe("how a waterfall cell ends", () => {
  it("ok with a winner, error only when no step answered and one failed", () => {
    expect(waterfallEnd([{ status: "rejected" }, { status: "found" }])).toBe("ok");
    expect(waterfallEnd([{ status: "error" }, { status: "error" }])).toBe("error");
    expect(waterfallEnd([{ status: "error" }, { status: "empty" }])).toBe("not_found");
    expect(waterfallEnd([{ status: "rejected" }, { status: "error" }])).toBe("not_found");
    expect(waterfallEnd([{ status: "not_called", skipped: true }, { status: "error" }])).toBe(
      "error",
    );
    expect(
      waterfallEnd([
        { status: "not_called", skipped: true },
        { status: "not_called", skipped: true },
      ]),
    ).toBe("skipped");
  });

  it("a workflow with an approval or wait block cannot be a step", () => {
    expect(canPause({ blocks: [{ id: "a", type: "approval" }] })).toBe(true);
    expect(canPause({ blocks: [{ id: "w", type: "wait", ms: 5 }] })).toBe(true);
    expect(canPause({ blocks: [{ id: "t", type: "transform", expression: "1" }] })).toBe(false);
  });
});

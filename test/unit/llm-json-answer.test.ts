/**
 * The check of a model's JSON answer (execution/llm/json-answer.ts): it takes time linear
 * in the answer whatever the schema (`pattern` and `patternProperties` on RE2, a
 * `uniqueItems` that does not compare pairs, an answer over 1 MiB refused unchecked), and
 * one schema never changes how another resolves (no `$id` of one is seen by another).
 */
import { describe, expect, it } from "vitest";
import {
  AnswerTooLong,
  checkJsonAnswer,
  InvalidSchema,
  MAX_CHECKED_ANSWER_CHARS,
  validatorFor,
} from "@/execution/llm/json-answer";

/** How long `fn` held the thread (a backtracking regex would hold it for seconds). */
function timed<T>(fn: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = fn();
  return { value, ms: performance.now() - started };
}

// With a backtracking RegExp, 26 a's and a "!" take ~9 s on `^(a+)+$` (doubling per a).
const EVIL = `${"a".repeat(26)}!`;

describe("the check takes time linear in the answer", () => {
  it("a catastrophic `pattern` is matched without backtracking", () => {
    const validate = validatorFor({ type: "string", pattern: "^(a+)+$" });
    const { value, ms } = timed(() => checkJsonAnswer(JSON.stringify(EVIL), validate));
    expect(value).toEqual({ ok: false, errors: 'answer must match pattern "^(a+)+$"' });
    expect(ms).toBeLessThan(1_000);
    const long = timed(() => checkJsonAnswer(JSON.stringify(`${"a".repeat(100_000)}!`), validate));
    expect(long.value.ok).toBe(false);
    expect(long.ms).toBeLessThan(1_000);
    expect(checkJsonAnswer(JSON.stringify("aaaa"), validate)).toEqual({ ok: true, value: "aaaa" });
  });

  it("a catastrophic `patternProperties` key is matched without backtracking", () => {
    const validate = validatorFor({
      type: "object",
      patternProperties: { "^(a+)+$": { type: "number" } },
    });
    const { value, ms } = timed(() =>
      checkJsonAnswer(JSON.stringify({ [EVIL]: "x", aa: 1 }), validate),
    );
    expect(value.ok).toBe(true);
    expect(ms).toBeLessThan(1_000);
    expect(checkJsonAnswer(JSON.stringify({ aaa: "x" }), validate).ok).toBe(false);
  });

  it("patterns keep JSON Schema's meaning: unanchored, \\u escapes, classes", () => {
    const validate = validatorFor({ type: "string", pattern: "\\d{3}-[\\u0041-\\u005A]+" });
    expect(checkJsonAnswer(JSON.stringify("ref 123-ABC."), validate).ok).toBe(true);
    expect(checkJsonAnswer(JSON.stringify("123-abc"), validate).ok).toBe(false);
  });

  it("a pattern RE2 cannot run in linear time (a backreference, a lookahead) is an invalid schema", () => {
    expect(() => validatorFor({ type: "string", pattern: "(a)\\1" })).toThrow(InvalidSchema);
    expect(() => validatorFor({ type: "string", pattern: "^(?=a)" })).toThrow(InvalidSchema);
  });

  it("uniqueItems over 20,000 distinct objects does not compare them pair by pair", () => {
    const validate = validatorFor({ type: "array", uniqueItems: true });
    const items = Array.from({ length: 20_000 }, (_, i) => ({ a: i, b: [i, { c: "x" }] }));
    const { value, ms } = timed(() => checkJsonAnswer(JSON.stringify(items), validate));
    expect(value.ok).toBe(true);
    expect(ms).toBeLessThan(2_000);
  });

  it("uniqueItems still finds equal items, whatever their keys' order", () => {
    const validate = validatorFor({ type: "array", uniqueItems: true });
    const answer = JSON.stringify([{ a: 1, b: [2] }, 3, { b: [2], a: 1 }]);
    expect(checkJsonAnswer(answer, validate)).toEqual({
      ok: false,
      errors: "answer must NOT have duplicate items (items ## 2 and 0 are identical)",
    });
    expect(checkJsonAnswer(JSON.stringify([1, "1", [1], { a: 1 }]), validate).ok).toBe(true);
  });

  it("an answer over 1 MiB is refused unchecked", () => {
    const validate = validatorFor({ type: "string" });
    const text = JSON.stringify("a".repeat(MAX_CHECKED_ANSWER_CHARS));
    expect(() => checkJsonAnswer(text, validate)).toThrow(AnswerTooLong);
    const fits = JSON.stringify("a".repeat(MAX_CHECKED_ANSWER_CHARS - 2));
    expect(checkJsonAnswer(fits, validate).ok).toBe(true);
  });
});

describe("one schema never changes how another resolves", () => {
  const withNested = (type: string) => ({
    $defs: { shared: { $id: "https://schemas.example/shared", type } },
    type: "object",
    properties: { v: { $ref: "https://schemas.example/shared" } },
    required: ["v"],
  });

  it("two schemas with the same nested $id each resolve their own", () => {
    const strings = validatorFor(withNested("string"));
    const numbers = validatorFor(withNested("number"));
    expect(checkJsonAnswer('{"v":"x"}', strings).ok).toBe(true);
    expect(checkJsonAnswer('{"v":1}', strings).ok).toBe(false);
    expect(checkJsonAnswer('{"v":1}', numbers).ok).toBe(true);
    expect(checkJsonAnswer('{"v":"x"}', numbers).ok).toBe(false);
  });

  it("a $ref to another schema's nested $id does not resolve (not even to a path of its own)", () => {
    validatorFor(withNested("boolean"));
    // A shared instance kept the first schema's `$id → #/$defs/shared` after removeSchema:
    // this $ref then resolved to this schema's own unrelated #/$defs/shared.
    expect(() =>
      validatorFor({
        $defs: { shared: { type: "number" } },
        type: "object",
        properties: { w: { $ref: "https://schemas.example/shared" } },
      }),
    ).toThrow(InvalidSchema);
  });
});

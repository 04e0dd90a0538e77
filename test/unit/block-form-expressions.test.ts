/**
 * The form's expression check, as people type: a JSONata syntax error with where it is,
 * names read from the root held to the ones in scope (a typo of `blocks` or an unknown
 * block id is a warning), names in filters and lambdas left alone, each `{{ }}` of a
 * template checked in place, and the completions offered for the name being typed.
 */
import { describe, expect, it } from "vitest";
import { parseTemplate } from "@/domain/templates";
import {
  checkExpression,
  checkTemplate,
  completeAt,
  templateExpressionsAt,
} from "@/ui/workflows/expression-check";

const scope = { inputNames: ["email", "name"], blockIds: ["fetch", "score"] };

describe("expressions", () => {
  it("a syntax error comes with its position", () => {
    const [p, ...rest] = checkExpression("$count(inputs.xs", scope);
    expect(rest).toEqual([]);
    expect(p?.severity).toBe("error");
    expect(p?.message).toMatch(/Expected "\)" before end of expression \(at character \d+\)/);
    expect(p?.position).toBeGreaterThanOrEqual(14);
    expect(p?.position).toBeLessThanOrEqual(16);
    const [dangling] = checkExpression("inputs.n >", scope);
    expect(dangling).toMatchObject({ severity: "error", position: 9 });
  });

  it("the names in scope pass", () => {
    for (const ok of [
      "inputs.email",
      "row.company & vars.x",
      "blocks.fetch.body.items[price > 3].name",
      "$count(blocks.score) > 2 ? secrets.KEY : 'none'",
      "{ 'a': inputs.name, 'b': [row.x, blocks.fetch] }",
      "$map(inputs.email, function($v) { other })",
      "$.inputs",
      "",
    ]) {
      expect(checkExpression(ok, scope), ok).toEqual([]);
    }
  });

  it("an unknown root name is a warning at the name", () => {
    expect(checkExpression("1 + blokcs.x", scope)).toEqual([
      { severity: "warning", message: expect.stringMatching(/unknown name “blokcs”/), position: 4 },
    ]);
    expect(checkExpression("$uppercase(inpts.name)", scope)).toMatchObject([
      { severity: "warning", position: 11 },
    ]);
  });

  it("an unknown block id after blocks. is a warning at the id", () => {
    expect(checkExpression("blocks.fetch.status = 200 and blocks.nope", scope)).toEqual([
      {
        severity: "warning",
        message: "no other block has the id “nope” (blocks: fetch, score)",
        position: 37,
      },
    ]);
  });

  it("an undeclared input is a warning only when the workflow declares inputs", () => {
    expect(checkExpression("inputs.mail", scope)).toMatchObject([
      { severity: "warning", message: expect.stringMatching(/no input “mail”/), position: 7 },
    ]);
    expect(checkExpression("inputs.mail", { inputNames: [], blockIds: [] })).toEqual([]);
  });
});

describe("templates", () => {
  it("finds each {{ }} where the engine does", () => {
    const text = "https://x/{{ inputs.email }}?q={{row.q}}&n={{  }}";
    const found = templateExpressionsAt(text);
    expect(found.map((f) => f.expression)).toEqual(
      parseTemplate(text).flatMap((p) => (p.expression === undefined ? [] : [p.expression])),
    );
    for (const f of found) {
      if (f.expression)
        expect(text.slice(f.start, f.start + f.expression.length)).toBe(f.expression);
    }
  });

  it("checks each expression in place, and a {{ left open", () => {
    const text = "Hi {{ blokcs.a }}, {{ inputs.name ) }} {{ }} and {{ row";
    const problems = checkTemplate(text, scope);
    expect(problems.map((p) => p.severity)).toEqual(["warning", "error", "error", "warning"]);
    expect(problems[0]?.position).toBe(text.indexOf("blokcs"));
    expect(problems[1]?.position).toBeGreaterThan(text.indexOf("inputs.name"));
    expect(problems[1]?.position).toBeLessThan(text.indexOf("}}", text.indexOf("inputs.name")));
    expect(problems[2]?.message).toMatch(/empty/);
    expect(problems[3]).toMatchObject({
      position: text.lastIndexOf("{{"),
      message: expect.stringMatching(/without a closing/),
    });
  });

  it("plain text is fine", () => {
    expect(checkTemplate("no expressions here", scope)).toEqual([]);
  });
});

describe("completions", () => {
  it("offers root names, block ids and inputs for the name being typed", () => {
    expect(completeAt("bl", 2, scope, false)).toEqual({ from: 0, to: 2, options: ["blocks"] });
    expect(completeAt("1 + blocks.", 11, scope, false)).toEqual({
      from: 4,
      to: 11,
      options: ["blocks.fetch", "blocks.score"],
    });
    expect(completeAt("blocks.sc", 9, scope, false)?.options).toEqual(["blocks.score"]);
    expect(completeAt("inputs.e", 8, scope, false)?.options).toEqual(["inputs.email"]);
    expect(completeAt("v", 1, scope, false)?.options).toEqual(["vars"]);
  });

  it("offers nothing inside a longer path, a variable, or a complete name", () => {
    expect(completeAt("blocks.fetch.bo", 15, scope, false)).toBeNull();
    expect(completeAt("$bl", 3, scope, false)).toBeNull();
    expect(completeAt("blocks", 6, scope, false)).toBeNull();
  });

  it("in a template, only inside an open {{", () => {
    expect(completeAt("row", 3, scope, true)).toBeNull();
    expect(completeAt("Hi {{ ro", 8, scope, true)?.options).toEqual(["row"]);
    expect(completeAt("{{ x }} ro", 10, scope, true)).toBeNull();
  });
});

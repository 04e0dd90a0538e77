/**
 * Expressions are sandboxed: whatever an expression tries, it reaches no JavaScript
 * function, no process, environment or file system, and nothing but plain JSON leaves
 * it; a runaway expression is stopped by a time, depth or size limit with a typed error
 * and a plain message. No timing is asserted: only that the evaluation was stopped, and why.
 */
import { describe, expect, it } from "vitest";
import {
  ExpressionError,
  type ExpressionFailure,
  type ExpressionScope,
  evaluate,
  LIMITS,
  renderTemplate,
} from "@/execution/expressions";

const SECRET = "sandbox-secret-value";

function scope(): ExpressionScope {
  return {
    inputs: { name: "Ada", n: 3, list: [1, 2, 3], nested: { deep: { x: 1 } } },
    row: { company: "Acme" },
    blocks: { prev: { body: { text: "hello" } } },
    vars: {},
    secrets: { TOKEN: SECRET },
  };
}

async function rejection(expression: string): Promise<ExpressionError> {
  const err = await evaluate(expression, scope()).then(
    (value) => {
      throw new Error(`expected ${expression} to fail, got ${JSON.stringify(value)}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ExpressionError);
  return err as ExpressionError;
}

async function stoppedBy(expression: string, kind: ExpressionFailure): Promise<string> {
  const err = await rejection(expression);
  expect({ expression, kind: err.kind }).toEqual({ expression, kind });
  return err.message;
}

/** True when a value, at any depth, is or holds something other than plain JSON. */
function holdsNonJson(value: unknown): boolean {
  if (value === null || ["string", "number", "boolean"].includes(typeof value)) return false;
  if (typeof value !== "object") return true;
  if (Array.isArray(value)) return value.some(holdsNonJson);
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return true;
  return Object.values(value).some(holdsNonJson);
}

describe("an expression cannot reach JavaScript, the process or the environment", () => {
  // Each one, in a JavaScript evaluator, would reach Function, process or a prototype.
  const escapes = [
    "inputs.constructor",
    "inputs.__proto__",
    "inputs.prototype",
    "inputs.constructor.prototype",
    'inputs.constructor.constructor("return process")()',
    'inputs.name.constructor.constructor("return process")()',
    "inputs.n.constructor",
    "inputs.list.constructor",
    '$lookup(inputs, "constructor")',
    '$lookup(inputs, "__proto__")',
    '$lookup($lookup(inputs, "constructor"), "constructor")',
    '$lookup(row, "toString")',
    "inputs.toString",
    "inputs.hasOwnProperty",
    "$.constructor",
    "$$.constructor.constructor",
    "$string.constructor",
    '$lookup($string, "constructor")',
    "$string.implementation",
    '$lookup($string, "implementation")',
    "$string.apply",
    "$string.call",
    "(function($x){ $x }).environment",
    "(function($x){ $x }).input",
    '$lookup(function($x){ $x }, "environment")',
    '$eval("inputs.constructor")',
    '$eval("$string.constructor")',
    '$eval("inputs.constructor.constructor(\\"return process\\")()")',
    "$process",
    "$require",
    "$globalThis",
    "$global",
    "$module",
    "$Function",
    "$env",
    '$lookup($, "process")',
    "process",
    "globalThis",
    "require",
  ];

  it.each(escapes)("%s finds nothing", async (expression) => {
    await expect(evaluate(expression, scope())).resolves.toBeNull();
  });

  it("calling what is not a function fails as an expression error, calling nothing", async () => {
    for (const expression of [
      '$require("fs")',
      'inputs.constructor("return 1")()',
      '$string.constructor("return process")()',
      '($f := $string; $f.constructor("return process")())',
      '$lookup(inputs, "constructor")("return process")()',
    ]) {
      const err = await rejection(expression);
      expect({ expression, kind: err.kind }).toEqual({ expression, kind: "error" });
      expect(err.message).toContain("T1006");
    }
  });

  it("paths through names JavaScript would resolve find nothing to call", async () => {
    for (const expression of [
      "$process.exit(1)",
      "$globalThis.process.env",
      '$process.mainModule.require("child_process")',
    ]) {
      await expect(evaluate(expression, scope())).resolves.toBeNull();
    }
    expect(process.exitCode ?? 0).toBe(0);
  });

  it("data that looks like a prototype is only data, and pollutes nothing", async () => {
    const merged = await evaluate('$merge([{"__proto__": {"polluted": true}}, {"a": 1}])', scope());
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(holdsNonJson(merged)).toBe(false);
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    const built = await evaluate('{"__proto__": {"polluted": true}}', scope());
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(built)).toBe(Object.prototype);
    await expect(evaluate('$lookup({"__proto__": {"x": 1}}, "x")', scope())).resolves.toBeNull();
  });

  it("functions, lambdas and regexes never leave an evaluation: they become null", async () => {
    const cases: [string, unknown][] = [
      ["$string", null],
      ["function($x){ $x }", null],
      ["/a+/", null],
      ['$eval("function($x){ $x }")', null],
      [
        '{"f": function($x){ $x }, "s": $string, "r": /a/, "n": 1}',
        { f: null, s: null, r: null, n: 1 },
      ],
      ["[$string, $lookup, 1]", [null, null, 1]],
      ["$sift(inputs, function($v){ $type($v) = 'string' })", { name: "Ada" }],
    ];
    for (const [expression, expected] of cases) {
      const value = await evaluate(expression, scope());
      expect({ expression, value }).toEqual({ expression, value: expected });
      expect(holdsNonJson(value)).toBe(false);
    }
  });

  it("what an expression may use still works: $now, $millis, regex, $eval on data", async () => {
    expect(await evaluate("$now()", scope())).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(typeof (await evaluate("$millis()", scope()))).toBe("number");
    expect(await evaluate('$match("abc123", /[0-9]+/).match', scope())).toBe("123");
    expect(await evaluate('$replace(row.company, /c/i, "k")', scope())).toBe("Akme");
    // Quantifiers inside classes, escaped parentheses, single repeats and groups without
    // inner repetition are not the dangerous shape.
    expect(await evaluate('$contains("a+b", /[+*](b)+/)', scope())).toBe(true);
    expect(await evaluate('$contains("(aa)", /\\(a+\\)+/)', scope())).toBe(true);
    expect(await evaluate('$contains("abab", /(ab){2}/)', scope())).toBe(true);
    expect(await evaluate('$contains("ababc", /(ab)+c/)', scope())).toBe(true);
    expect(await evaluate('$eval("1 + 2")', scope())).toBe(3);
    expect(await evaluate("$sum(inputs.list)", scope())).toBe(6);
    expect(await renderTemplate("{{ inputs.name }} at {{ row.company }}", scope())).toBe(
      "Ada at Acme",
    );
  });

  it("a failing expression is an ExpressionError with a plain message, not an object", async () => {
    const err = await rejection('$error("custom failure")');
    expect(err.kind).toBe("error");
    expect(err.message).toContain("custom failure");
    const syntax = await rejection("inputs.(");
    expect(syntax.kind).toBe("error");
    expect(syntax.message).not.toBe("[object Object]");
  });
});

describe("a runaway expression is stopped with a typed error", () => {
  it("endless recursion (tail call) is stopped by the time limit", async () => {
    const message = await stoppedBy("($f := function($n){ $f($n + 1) }; $f(0))", "time");
    expect(message).toBe(`the expression was stopped: it ran longer than ${LIMITS.timeMs} ms`);
  });

  it("an endless loop of nested work is stopped by the time limit", async () => {
    // Small inner arrays: with a million-item one per step, a fast machine reached the
    // allocation budget (50 steps) before the second was up, and the test read "size".
    // Here the budget lasts some 25,000 steps of 1,000 calls each: far past the time limit.
    await stoppedBy(
      "$sum($map([1..999999], function($i){ $sum($map([1..999], function($j){ $j * 2 })) }))",
      "time",
    );
  });

  it("deep recursion is stopped by the depth limit", async () => {
    const message = await stoppedBy(
      "($f := function($n){ $n > 0 ? 1 + $f($n - 1) : 0 }; $f(1000000))",
      "depth",
    );
    expect(message).toContain(`deeper than ${LIMITS.depth}`);
  });

  it("a huge range is stopped by the sequence limit before it is allocated", async () => {
    const message = await stoppedBy("[1..10000000]", "size");
    expect(message).toContain(`longer than ${LIMITS.sequence} items`);
    await stoppedBy("$count([1..9999999999])", "size");
  });

  it("a huge $pad is stopped by the string limit", async () => {
    const message = await stoppedBy('$pad("", 20000000)', "size");
    expect(message).toContain(`longer than ${LIMITS.stringChars} characters`);
    await stoppedBy('$pad("", 1000000000, "abcdefghij")', "size");
  });

  it("string doubling is stopped by the string limit", async () => {
    const message = await stoppedBy(
      '($f := function($s, $n){ $n = 0 ? $s : $f($s & $s, $n - 1) }; $f("x", 60))',
      "size",
    );
    expect(message).toContain("string longer than");
  });

  // Doubling builds 2^23 characters cheaply (V8 joins strings lazily); ten copies of it,
  // each under the string limit, go over the budget.
  const manyCopies =
    '($d := function($s, $n){ $n = 0 ? $s : $d($s & $s, $n - 1) }; $s := $d("x", 23); $map([1..10], function($i){ $s & "" }))';

  it("many values each under the limits are stopped by the allocation budget", async () => {
    const message = await stoppedBy(manyCopies, "size");
    expect(message).toContain(`more than ${LIMITS.allocated} items and characters`);
  });

  it("a regex that can backtrack for ever is refused before it runs", async () => {
    for (const expression of [
      '$match("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", /(a+)+$/)',
      '$contains("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", /(a|aa)*$/)',
      '$replace("abab", /(ab)\\1/, "x")',
      '$match("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", /((a+))+$/)',
      '$eval("$match(\\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\\", /(a+)+$/)")',
      '$match("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", /(?:(?:a|aa)){2,}$/)',
      '$match("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", /(?:[ab](a*)){1,99}$/)',
    ]) {
      const message = await stoppedBy(expression, "regex");
      expect(message).toMatch(/^the regex \/.+\/ was refused/);
    }
  });

  it("a limit hit inside $eval is still that limit", async () => {
    await stoppedBy('$eval("($f := function($n){ $f($n + 1) }; $f(0))")', "time");
    await stoppedBy('$eval("[1..10000000]")', "size");
  });

  it("a template with a runaway expression fails the same way", async () => {
    const err = await renderTemplate("x {{ ($f := function(){ $f() }; $f()) }}", scope()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ExpressionError);
    expect((err as ExpressionError).kind).toBe("time");
  });

  it("limits are per evaluation: a stopped expression leaves the next one unharmed", async () => {
    await stoppedBy(manyCopies, "size");
    expect(await evaluate('$length($pad("", 1000000))', scope())).toBe(1_000_000);
  });
});

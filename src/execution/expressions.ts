/**
 * JSONata expressions and `{{ }}` templates, sandboxed. Invariants: an expression reads
 * only the scope's own data (JSONata looks up own properties only, so `constructor`,
 * `__proto__` and `prototype` find nothing, and it has no way to name `process`,
 * `require` or `globalThis`); what leaves an evaluation is plain JSON (functions, regexes
 * and JSONata's internal function objects become null); an evaluation that runs longer
 * than LIMITS.timeMs, nests deeper than LIMITS.depth, builds a sequence longer than
 * LIMITS.sequence, a string longer than LIMITS.stringChars or more than LIMITS.allocated
 * items and characters in all, or uses a regex prone to catastrophic backtracking, ends
 * with an ExpressionError whose message is meant for people.
 */
import jsonata from "jsonata";
import { parseTemplate } from "@/domain/templates";

/** What every expression sees. */
export interface ExpressionScope {
  inputs: Record<string, unknown>;
  row: Record<string, unknown>;
  blocks: Record<string, unknown>;
  vars: Record<string, unknown>;
  /** The workspace's secrets by name (`secrets.NAME`); redacted from everything that leaves. */
  secrets: Record<string, string>;
}

export const LIMITS = {
  /** Checked at every step, so a loop inside one built-in call finishes that call first. */
  timeMs: 1_000,
  depth: 1_000,
  sequence: 1_000_000,
  /** Twice the largest http response, so any answer can still be turned into text. */
  stringChars: 10 * 1024 * 1024,
  /** Items of arrays and characters of strings built over one evaluation. */
  allocated: 50_000_000,
} as const;

export type ExpressionFailure = "time" | "depth" | "size" | "regex" | "error";

/** An expression that could not be evaluated; `kind` says whether a limit stopped it. */
export class ExpressionError extends Error {
  constructor(
    readonly kind: ExpressionFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "ExpressionError";
  }
}

const EXIT = Symbol.for("jsonata.__evaluate_exit");
/** Node types that return what is already there rather than build something new. */
const READS = new Set(["name", "variable", "string", "number", "value", "parent", "regex"]);
/** Node types whose string results are new strings (concatenation, built-ins, lambdas). */
const BUILDS = new Set(["function", "binary", "apply", "partial"]);

/** Per evaluation (JSONata's root frame is one object per `evaluate` call): what was built. */
const budgets = new WeakMap<object, { used: number }>();

class SizeLimit {
  constructor(readonly message: string) {}
}

function onExit(expr: { type?: string }, _input: unknown, env: { base?: object }, result: unknown) {
  const type = expr.type ?? "";
  if (READS.has(type)) return;
  let size = 0;
  if (typeof result === "string") {
    if (!BUILDS.has(type)) return;
    size = result.length;
    if (size > LIMITS.stringChars)
      throw new SizeLimit(`it built a string longer than ${LIMITS.stringChars} characters`);
  } else if (Array.isArray(result)) {
    size = result.length;
  } else return;
  const base = env.base;
  if (!base) return;
  let budget = budgets.get(base);
  if (!budget) {
    budget = { used: 0 };
    budgets.set(base, budget);
  }
  budget.used += size;
  if (budget.used > LIMITS.allocated)
    throw new SizeLimit(`it built more than ${LIMITS.allocated} items and characters in all`);
}

/**
 * A repeated group that itself holds a quantifier or an alternation, e.g. `(a+)+`,
 * `((a|aa))*`: the shape that backtracks exponentially. JavaScript regexes cannot be
 * stopped once running, so such patterns are refused before they run (backreferences too).
 * Conservative: some safe patterns, like `(?:[a-z]+\.)+`, are refused as well.
 */
function unsafePattern(source: string): boolean {
  if (/\\[1-9]|\\k</.test(source)) return true;
  // One entry per open group: whether it holds a quantifier or `|` at any depth.
  const open: boolean[] = [];
  let closedRisky = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    const quantifier = isQuantifierAt(source, i);
    if (quantifier && closedRisky) return true;
    closedRisky = false;
    if (c === "\\") {
      i++;
    } else if (c === "[") {
      // A class is one character, whatever is in it.
      for (i++; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
    } else if (c === "(") {
      open.push(false);
    } else if (c === ")") {
      const risky = open.pop() ?? false;
      if (risky && open.length > 0) open[open.length - 1] = true;
      closedRisky = risky;
    } else if ((quantifier || c === "|") && open.length > 0) {
      open[open.length - 1] = true;
    }
  }
  return false;
}

/** `*`, `+`, or `{n,}` / `{n,m}`: repetition (`?` and `{n}` repeat nothing). */
function isQuantifierAt(source: string, i: number): boolean {
  const c = source[i];
  if (c === "*" || c === "+") return true;
  return c === "{" && /^\{\d+,\d*\}/.test(source.slice(i, i + 24));
}

class UnsafeRegex {
  constructor(readonly source: string) {}
}

class GuardedRegExp extends RegExp {
  constructor(pattern: RegExp | string, flags?: string) {
    const source = typeof pattern === "string" ? pattern : pattern.source;
    if (unsafePattern(source)) throw new UnsafeRegex(source);
    super(pattern, flags);
  }
}

const compiled = new Map<string, ReturnType<typeof jsonata>>();

function compile(expression: string): ReturnType<typeof jsonata> {
  let expr = compiled.get(expression);
  if (!expr) {
    try {
      expr = jsonata(expression, {
        timeout: LIMITS.timeMs,
        stack: LIMITS.depth,
        sequence: LIMITS.sequence,
        // Only ever constructed (`new`) by JSONata; its type wants RegExp's call signature too.
        RegexEngine: GuardedRegExp as unknown as RegExpConstructor,
      });
    } catch (err) {
      throw toExpressionError(err);
    }
    // The hook is stateless per expression (its budget is keyed by the evaluation), so one
    // compiled expression serves concurrent evaluations. `assign` is typed for names only.
    Reflect.apply(expr.assign, expr, [EXIT, onExit]);
    if (compiled.size > 5_000) compiled.clear();
    compiled.set(expression, expr);
  }
  return expr;
}

/** Evaluates a JSONata expression; `undefined` (no match) becomes null. */
export async function evaluate(expression: string, scope: ExpressionScope): Promise<unknown> {
  const expr = compile(expression);
  let result: unknown;
  try {
    result = await expr.evaluate(scope);
  } catch (err) {
    throw toExpressionError(err);
  }
  return toJson(result);
}

/** JSONata's failures are plain objects with a code; V8's are RangeErrors. */
function toExpressionError(err: unknown): ExpressionError {
  if (err instanceof ExpressionError) return err;
  if (err instanceof SizeLimit)
    return new ExpressionError("size", `the expression was stopped: ${err.message}`);
  if (err instanceof UnsafeRegex)
    return new ExpressionError(
      "regex",
      `the regex /${err.source}/ was refused: nested quantifiers and backreferences can run for ever`,
    );
  const code = errorField(err, "code");
  // $eval wraps what stopped the expression it ran: a limit stays that limit.
  if (code === "D3121" && err !== null && typeof err === "object" && "error" in err) {
    const inner = toExpressionError(err.error);
    if (inner.kind !== "error") return inner;
  }
  const message = errorField(err, "message") ?? String(err);
  if (code === "D1012")
    return new ExpressionError(
      "time",
      `the expression was stopped: it ran longer than ${LIMITS.timeMs} ms`,
    );
  if (code === "D1011" || /call stack/i.test(message))
    return new ExpressionError(
      "depth",
      `the expression was stopped: it nested or recursed deeper than ${LIMITS.depth} steps`,
    );
  if (code === "D2014" || code === "D2015")
    return new ExpressionError(
      "size",
      `the expression was stopped: it built a sequence longer than ${LIMITS.sequence} items`,
    );
  if (err instanceof RangeError && /string length|array length|allocation/i.test(message))
    return new ExpressionError(
      "size",
      `the expression was stopped: it built a value larger than the engine can hold`,
    );
  return new ExpressionError("error", code ? `${message} (${code})` : message);
}

function errorField(err: unknown, name: "code" | "message"): string | undefined {
  if (err === null || typeof err !== "object") return undefined;
  const value: unknown = (err as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * Plain JSON out of whatever JSONata returned: its sequences become arrays; functions
 * (built-ins, lambdas, which hold the whole evaluation environment), regexes and
 * non-finite numbers become null; `undefined` inside an object drops the key as
 * JSON.stringify would.
 */
function toJson(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value !== "object") return null;
  if (isFunctionObject(value) || value instanceof RegExp) return null;
  if (Array.isArray(value)) return value.map((item: unknown) => toJson(item));
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return null;
  const entries: [string, unknown][] = [];
  for (const [key, item] of Object.entries(value)) {
    if (item !== undefined) entries.push([key, toJson(item)]);
  }
  // fromEntries defines own properties, so a "__proto__" key stays a plain key.
  return Object.fromEntries(entries);
}

function isFunctionObject(value: object): boolean {
  return Object.hasOwn(value, "_jsonata_function") || Object.hasOwn(value, "_jsonata_lambda");
}

/** Renders `{{ expression }}` templates into a string. */
export async function renderTemplate(text: string, scope: ExpressionScope): Promise<string> {
  let out = "";
  for (const part of parseTemplate(text)) {
    out += part.literal;
    if (part.expression !== undefined) {
      const value = await evaluate(part.expression, scope);
      out += value === null ? "" : typeof value === "string" ? value : JSON.stringify(value);
    }
  }
  return out;
}

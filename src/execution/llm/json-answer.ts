/**
 * Checks a model's JSON answer against the block's schema with ajv. Invariants:
 * - The check takes time linear in the answer: `pattern` and `patternProperties` run on
 *   RE2 (re2js, no backtracking), never on a JS RegExp, whose backtracking on a pattern such
 *   as `^(a+)+$` would hold the worker's only thread for minutes, past every timeout and
 *   Stop; an answer longer than MAX_CHECKED_ANSWER_CHARS is not checked at all.
 * - One schema cannot change how another resolves: each compiled schema has its own Ajv
 *   instance, so a nested `$id` of one workspace's schema is never seen by another's `$ref`.
 * - Each schema is compiled once per process and kept by its JSON text in a bounded cache
 *   (least recently used out), so a column of 50,000 rows compiles it once and many
 *   workflows cannot grow the cache (nor what their instances hold) without bound.
 */
import {
  Ajv,
  type CodeOptions,
  type FuncKeywordDefinition,
  type SchemaValidateFunction,
  type ValidateFunction,
} from "ajv";
import { RE2JS } from "re2js";

const MAX_VALIDATORS = 200;
/** 1 MiB of text: far over what a JSON answer of any real `maxTokens` holds. */
export const MAX_CHECKED_ANSWER_CHARS = 1 << 20;
const validators = new Map<string, ValidateFunction>();

/**
 * JSON Schema's `pattern` is an ECMA-262 regex, unanchored; RE2 runs the same syntax
 * (after `translateRegExp`: `\uXXXX` escapes) except lookarounds and backreferences, which
 * cannot run in linear time: a schema that has them does not compile (`InvalidSchema`).
 */
const re2: NonNullable<CodeOptions["regExp"]> = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    // ajv keys its compiled patterns by toString: the source tells them apart.
    return { test: (s: string) => compiled.test(s), toString: () => pattern };
  },
  // What standalone code would call it by; validators here are never made standalone.
  { code: "re2" },
);

/** JSON text of a value with its keys sorted: equal values (as ajv's deep equality) alike. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * `uniqueItems` in time linear in the array's text: ajv's own compares objects pair by
 * pair, and 20,000 distinct objects (200 KB of answer) held the thread for half a minute.
 */
const unique: SchemaValidateFunction = (schema: boolean, data: unknown[]) => {
  if (!schema) return true;
  const seen = new Map<string, number>();
  for (let j = 0; j < data.length; j++) {
    const key = canonical(data[j]);
    const i = seen.get(key);
    if (i !== undefined) {
      unique.errors = [
        {
          keyword: "uniqueItems",
          message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
          params: { i, j },
        },
      ];
      return false;
    }
    seen.set(key, j);
  }
  return true;
};
const uniqueItems: FuncKeywordDefinition = {
  keyword: "uniqueItems",
  type: "array",
  schemaType: "boolean",
  errors: true,
  validate: unique,
};

/** A compiler of its own for one schema (see validatorFor), with the linear keywords. */
function compilerFor(): Ajv {
  const ajv = new Ajv({ ...options, validateSchema: false });
  ajv.removeKeyword("uniqueItems");
  ajv.addKeyword(uniqueItems);
  return ajv;
}

const options = { allErrors: true, strict: false, code: { regExp: re2 } };
/**
 * Checks schemas against the meta-schema (compiled once, here) and formats error lists; it
 * never compiles a block's schema, so it holds none.
 */
const shared = new Ajv(options);

export type JsonCheck =
  | { ok: true; value: unknown }
  | {
      ok: false;
      /** What to tell the model and people: why the answer is not what was asked. */
      errors: string;
    };

/** The schema itself is not one ajv can compile: no answer can be checked against it. */
export class InvalidSchema extends Error {}

/** The answer is longer than is ever checked: the block fails without a repair call. */
export class AnswerTooLong extends Error {
  constructor(length: number) {
    super(
      `the model's answer is ${length} characters long, over the ${MAX_CHECKED_ANSWER_CHARS} a jsonSchema answer may have`,
    );
  }
}

/** `AnswerTooLong` when the text is over MAX_CHECKED_ANSWER_CHARS. */
export function checkJsonAnswer(text: string, validate: ValidateFunction): JsonCheck {
  if (text.length > MAX_CHECKED_ANSWER_CHARS) throw new AnswerTooLong(text.length);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, errors: `not valid JSON (${err instanceof Error ? err.message : err})` };
  }
  try {
    if (validate(value)) return { ok: true, value };
  } catch (err) {
    // An answer nested deeper than the stack: it cannot be what the schema asks for.
    return {
      ok: false,
      errors: `the answer could not be checked (${err instanceof Error ? err.message : err})`,
    };
  }
  return {
    ok: false,
    errors: shared.errorsText(validate.errors, { dataVar: "answer", separator: "; " }),
  };
}

/** The schema's validator, compiled on first use; `InvalidSchema` when ajv cannot compile it. */
export function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  const known = validators.get(key);
  if (known) {
    validators.delete(key);
    validators.set(key, known);
    return known;
  }
  let compiled: ValidateFunction;
  try {
    // Its own instance: what it registers (the schema, every nested $id) goes with it when
    // the cache lets the validator go, and no other schema can see it.
    if (!shared.validateSchema(schema)) throw new Error(shared.errorsText(shared.errors));
    compiled = compilerFor().compile(schema);
  } catch (err) {
    throw new InvalidSchema(
      `the jsonSchema is not a valid JSON schema: ${err instanceof Error ? err.message : err}`,
    );
  }
  validators.set(key, compiled);
  if (validators.size > MAX_VALIDATORS) {
    const oldest = validators.keys().next().value;
    if (oldest !== undefined) validators.delete(oldest);
  }
  return compiled;
}

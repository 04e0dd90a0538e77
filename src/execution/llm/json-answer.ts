/**
 * Checks a model's JSON answer against the block's schema with ajv. Each schema is
 * compiled once per process and kept by its JSON text in a bounded cache (least recently
 * used out), so a column of 50,000 rows compiles it once and many workflows cannot grow
 * the cache without bound.
 */
import { Ajv, type ValidateFunction } from "ajv";

const MAX_VALIDATORS = 200;
const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new Map<string, ValidateFunction>();

export type JsonCheck =
  | { ok: true; value: unknown }
  | {
      ok: false;
      /** What to tell the model and people: why the answer is not what was asked. */
      errors: string;
    };

/** The schema itself is not one ajv can compile: no answer can be checked against it. */
export class InvalidSchema extends Error {}

export function checkJsonAnswer(text: string, validate: ValidateFunction): JsonCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, errors: `not valid JSON (${err instanceof Error ? err.message : err})` };
  }
  if (validate(value)) return { ok: true, value };
  return {
    ok: false,
    errors: ajv.errorsText(validate.errors, { dataVar: "answer", separator: "; " }),
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
    compiled = ajv.compile(schema);
  } catch (err) {
    throw new InvalidSchema(
      `the jsonSchema is not a valid JSON schema: ${err instanceof Error ? err.message : err}`,
    );
  } finally {
    // ajv keeps what it compiled (by object, and by $id, where a second one would clash);
    // the validator works on without it, and only this bounded map holds it.
    ajv.removeSchema(schema);
  }
  validators.set(key, compiled);
  if (validators.size > MAX_VALIDATORS) {
    const oldest = validators.keys().next().value;
    if (oldest !== undefined) validators.delete(oldest);
  }
  return compiled;
}

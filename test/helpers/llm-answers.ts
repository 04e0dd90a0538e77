/**
 * What the local LLM server answers (llm-server.ts), as pure functions: the same messages
 * always give the same answer. A text answer quotes the last user message, cut at the
 * output cap (4 characters a token, as `estimateTokens` counts); a structured answer is a
 * value built from the JSON schema (strings, numbers, integers, booleans, enums, consts,
 * arrays, nested objects, unions), varied by a hash of the last user message so rows get
 * different answers; a "violation" is a value of the schema's shape with every field of
 * the wrong type, which a validator must refuse.
 */

type Schema = Record<string, unknown>;

/** FNV-1a (32 bits) of a text: a seed that differs between prompts, the same every run. */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const mix = (seed: number, salt: string | number) => seedOf(`${seed}:${salt}`);

/** The text answer: `Answer: <prompt>`, at most `maxTokens` · 4 characters (then `cut`). */
export function textAnswer(prompt: string, maxTokens: number): { text: string; cut: boolean } {
  const full = `Answer: ${prompt}`;
  const max = maxTokens * 4;
  return full.length > max ? { text: full.slice(0, max), cut: true } : { text: full, cut: false };
}

function typeOf(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return (t.find((x) => x !== "null") ?? t[0]) as string | undefined;
  if (schema.properties !== undefined) return "object";
  if (schema.items !== undefined) return "array";
  return undefined;
}

const asSchema = (v: unknown): Schema =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Schema) : {};

/** A value that `schema` accepts, chosen by `seed`. */
export function valueForSchema(schema: Schema, seed: number, name = "value"): unknown {
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0)
    return schema.enum[seed % schema.enum.length];
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union) && union.length > 0)
    return valueForSchema(asSchema(union[0]), seed, name);
  switch (typeOf(schema)) {
    case "object": {
      const props = asSchema(schema.properties);
      return Object.fromEntries(
        Object.entries(props).map(([key, sub]) => [
          key,
          valueForSchema(asSchema(sub), mix(seed, key), key),
        ]),
      );
    }
    case "array": {
      const min = typeof schema.minItems === "number" ? schema.minItems : 1;
      const max = typeof schema.maxItems === "number" ? schema.maxItems : Math.max(min, 2);
      const n = Math.max(min, Math.min(max, 1 + (seed % 2)));
      return Array.from({ length: n }, (_, i) =>
        valueForSchema(asSchema(schema.items), mix(seed, i), name),
      );
    }
    case "integer":
    case "number": {
      const lo = typeof schema.minimum === "number" ? Math.ceil(schema.minimum) : 0;
      const hi = typeof schema.maximum === "number" ? Math.floor(schema.maximum) : lo + 100;
      return lo + (seed % (hi - lo + 1));
    }
    case "boolean":
      return seed % 2 === 0;
    case "null":
      return null;
    default: {
      let text = `${name}-${seed.toString(36)}`;
      if (typeof schema.minLength === "number") text = text.padEnd(schema.minLength, "x");
      if (typeof schema.maxLength === "number") text = text.slice(0, schema.maxLength);
      return text;
    }
  }
}

/** A value of the wrong type for `schema` (field by field for an object with properties). */
export function violationOf(schema: Schema): unknown {
  if (Array.isArray(schema.enum) || schema.const !== undefined) return "__not_allowed__";
  switch (typeOf(schema)) {
    case "object": {
      const props = Object.entries(asSchema(schema.properties));
      if (props.length === 0) return "not an object";
      return Object.fromEntries(props.map(([key, sub]) => [key, violationOf(asSchema(sub))]));
    }
    case "array":
      return "not an array";
    case "integer":
    case "number":
      return "not a number";
    case "boolean":
      return "maybe";
    case "null":
      return "not null";
    default:
      return 12_345;
  }
}

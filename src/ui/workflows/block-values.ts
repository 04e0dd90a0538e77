/**
 * What the side form writes into a block and what it says about it, without React: a
 * field set (an empty optional field removes its key, every other key of the block is
 * kept as it was), numbers read from text and held to the schema's bounds, and the
 * block's own schema run over the whole block with each issue placed under its field.
 */
import type { z } from "zod";
import type { BlockType } from "@/contracts/workflow";
import { BLOCK_SCHEMAS, type BlockField, type NumberBounds } from "./block-fields";

export type Block = Record<string, unknown>;

/** The block with `name` set, or removed when `value` is undefined; other keys untouched. */
export function withField(block: Block, name: string, value: unknown): Block {
  if (value === undefined) {
    if (!(name in block)) return block;
    const { [name]: _removed, ...rest } = block;
    return rest;
  }
  return { ...block, [name]: value };
}

/** A text field's value: empty means no value when the field is optional. */
export function textValue(text: string, required: boolean): string | undefined {
  return text === "" && !required ? undefined : text;
}

const NUMBER = /^\s*-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

export type NumberRead = { ok: true; value: number | undefined } | { ok: false; message: string };

/** A number field's text: empty is no value, anything that is not a number is refused. */
export function readNumber(text: string): NumberRead {
  if (text.trim() === "") return { ok: true, value: undefined };
  if (!NUMBER.test(text)) return { ok: false, message: "must be a number" };
  return { ok: true, value: Number(text) };
}

const fmt = (n: number) => n.toLocaleString("en-US");

/** Why a number breaks the schema's bounds, or null. */
export function numberProblem(value: number, b: NumberBounds): string | null {
  if (b.int && !Number.isInteger(value)) return "must be a whole number";
  if (b.min !== null && value < b.min) return `must be at least ${fmt(b.min)}`;
  if (b.max !== null && value > b.max) return `must be at most ${fmt(b.max)}`;
  return null;
}

/** wait's `ms`: digits are milliseconds, anything else is an expression giving them. */
export function readNumberOrExpression(text: string): number | string | undefined {
  if (text.trim() === "") return undefined;
  return NUMBER.test(text) ? Number(text) : text;
}

export interface FieldIssue {
  /** A field's path (`url`, `retry.attempts`), or "" for the block as a whole. */
  field: string;
  message: string;
}

type ZodIssue = z.core.$ZodIssue;

/** Zod's wording for people who did not write the schema. */
function messageOf(issue: ZodIssue): string {
  if (issue.code === "invalid_type" && issue.input === undefined) return "required";
  if (issue.code === "invalid_union") {
    // A union of a number and an expression: the branch of the value's own kind speaks.
    for (const branch of issue.errors) {
      const first = branch[0];
      if (first && first.code !== "invalid_type") return messageOf(first);
    }
  }
  if (issue.code === "too_small" && issue.origin === "string")
    return issue.minimum === 1
      ? "must not be empty"
      : `must be at least ${fmt(Number(issue.minimum))} characters`;
  if (issue.code === "too_big" && issue.origin === "string")
    return `must be at most ${fmt(Number(issue.maximum))} characters`;
  if (issue.code === "too_small" && issue.origin === "number" && issue.inclusive !== false)
    return `must be at least ${fmt(Number(issue.minimum))}`;
  if (issue.code === "too_big" && issue.origin === "number" && issue.inclusive !== false)
    return `must be at most ${fmt(Number(issue.maximum))}`;
  if (issue.code === "unrecognized_keys")
    return `unknown ${issue.keys.length === 1 ? "field" : "fields"} ${issue.keys.join(", ")} (the API refuses ${issue.keys.length === 1 ? "it" : "them"})`;
  return issue.message;
}

/** The field an issue's path points into: the deepest form field on it. */
function placeIssue(
  path: readonly PropertyKey[],
  fields: readonly BlockField[],
): FieldIssue["field"] {
  const [head, sub] = path;
  const field = fields.find((f) => f.name === head);
  if (!field) return "";
  if (field.kind.kind === "group") {
    const inner = field.kind.fields.find((f) => f.name === sub);
    if (inner) return inner.path;
  }
  return field.path;
}

/**
 * The block's issues under its type's schema, each under the field it concerns. A
 * record's issue names its key (`email: must not be empty`); issues about `id`, `next`
 * or unknown keys are the block's.
 */
export function blockIssues(
  type: BlockType,
  block: Block,
  fields: readonly BlockField[],
): FieldIssue[] {
  const result = BLOCK_SCHEMAS[type].safeParse(block);
  if (result.success) return [];
  return result.error.issues.map((issue) => {
    const field = placeIssue(issue.path, fields);
    const top = fields.find((f) => f.path === field);
    const key = issue.path[1];
    const message = messageOf(issue);
    const keyed =
      top?.kind.kind === "map" && typeof key === "string" ? `${key}: ${message}` : message;
    const where = field === "" && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    return { field, message: `${where}${keyed}` };
  });
}

/** Issues grouped by field path. */
export function issuesByField(issues: readonly FieldIssue[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const i of issues) map.set(i.field, [...(map.get(i.field) ?? []), i.message]);
  return map;
}

/** `retry.attempts` → `retry-attempts`, for test ids and element ids. */
export const fieldKey = (path: string) => path.replaceAll(".", "-");

/** A nested object's value (retry) with one of its fields set; empty and optional is none. */
export function withGroupField(
  group: unknown,
  name: string,
  value: unknown,
  required: boolean,
): Block | undefined {
  const base =
    typeof group === "object" && group !== null && !Array.isArray(group) ? (group as Block) : {};
  const next = withField(base, name, value);
  return Object.keys(next).length === 0 && !required ? undefined : next;
}

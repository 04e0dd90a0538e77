/**
 * The side form's fields for a block type, read from the block's zod schema in
 * src/contracts/workflow.ts rather than written out by hand: a field added to a block's
 * schema shows up in its form, with the bounds the API enforces. `id`, `type` and `next`
 * belong to the graph editor, so they are not form fields. The schema cannot say which
 * strings are `{{ }}` templates (a template is a plain bounded string) nor which ids name
 * a workflow or an enrichment, so those few facts are listed here.
 */
import { z } from "zod";
import { Expression, JsonValue } from "@/contracts/common";
import {
  ApprovalBlock,
  BLOCK_TYPES,
  type BlockType,
  ConditionBlock,
  EnrichmentBlock,
  FailBlock,
  ForeachBlock,
  HttpBlock,
  LlmBlock,
  TransformBlock,
  WaitBlock,
  WorkflowBlock,
} from "@/contracts/workflow";

/** Each block type's schema: the `Record` makes a new type a compile error here. */
export const BLOCK_SCHEMAS: Record<BlockType, z.ZodObject> = {
  transform: TransformBlock,
  condition: ConditionBlock,
  http: HttpBlock,
  foreach: ForeachBlock,
  workflow: WorkflowBlock,
  approval: ApprovalBlock,
  wait: WaitBlock,
  fail: FailBlock,
  enrichment: EnrichmentBlock,
  llm: LlmBlock,
};

/** Strings holding `{{ expression }}` templates (values, for a record). */
export const TEMPLATE_FIELDS: Partial<Record<BlockType, readonly string[]>> = {
  http: ["url", "headers"],
  fail: ["message"],
  approval: ["prompt"],
  llm: ["prompt"],
};

/** Long texts get several lines. */
const MULTILINE = new Set(["expression", "prompt", "system", "message"]);

/** The graph editor's fields. */
const EDITOR_FIELDS = new Set(["id", "type", "next"]);

export interface NumberBounds {
  min: number | null;
  max: number | null;
  int: boolean;
}

export type FieldKind =
  | { kind: "text"; min: number; max: number | null; multiline: boolean }
  | { kind: "expression"; multiline: boolean }
  | { kind: "template"; multiline: boolean }
  | ({ kind: "number" } & NumberBounds)
  /** A number, or an expression that gives one (wait's `ms`). */
  | ({ kind: "number-or-expression" } & NumberBounds)
  | { kind: "enum"; options: string[] }
  | { kind: "boolean" }
  /** `{ key: value }` whose values are expressions, templates or text. */
  | { kind: "map"; values: "expression" | "template" | "text" }
  | { kind: "json"; object: boolean }
  | { kind: "group"; fields: BlockField[] }
  | { kind: "workflow" }
  | { kind: "enrichment" };

export interface BlockField {
  /** The key in the block. */
  name: string;
  /** Dotted from the block (`retry.attempts`): issues and test ids use it. */
  path: string;
  required: boolean;
  kind: FieldKind;
}

export function isBlockType(type: unknown): type is BlockType {
  return typeof type === "string" && (BLOCK_TYPES as readonly string[]).includes(type);
}

function unwrapOptional(schema: z.ZodType): { inner: z.ZodType; required: boolean } {
  if (schema instanceof z.ZodOptional)
    return { inner: schema.unwrap() as z.ZodType, required: false };
  return { inner: schema, required: true };
}

function boundsOf(schema: z.ZodNumber): NumberBounds {
  const finite = (n: number | null) => (n === null || !Number.isFinite(n) ? null : n);
  return { min: finite(schema.minValue), max: finite(schema.maxValue), int: schema.isInt };
}

function kindOf(
  name: string,
  path: string,
  schema: z.ZodType,
  templates: readonly string[],
): FieldKind {
  const template = templates.includes(name);
  const multiline = MULTILINE.has(name);
  if (schema === Expression) return { kind: "expression", multiline };
  if (name === "workflowId") return { kind: "workflow" };
  if (name === "enrichmentId") return { kind: "enrichment" };
  if (schema === JsonValue) return { kind: "json", object: false };
  // A format (z.url(), z.email()) is a string of its own class.
  if (schema instanceof z.ZodString || schema instanceof z.ZodStringFormat) {
    if (template) return { kind: "template", multiline };
    return { kind: "text", min: schema.minLength ?? 0, max: schema.maxLength, multiline };
  }
  if (schema instanceof z.ZodNumber) return { kind: "number", ...boundsOf(schema) };
  if (schema instanceof z.ZodBoolean) return { kind: "boolean" };
  if (schema instanceof z.ZodEnum) return { kind: "enum", options: schema.options.map(String) };
  if (schema instanceof z.ZodUnion) {
    const options = schema.options as readonly z.ZodType[];
    const number = options.find((o): o is z.ZodNumber => o instanceof z.ZodNumber);
    if (options.length === 2 && number && options.includes(Expression))
      return { kind: "number-or-expression", ...boundsOf(number) };
  }
  if (schema instanceof z.ZodRecord) {
    const values = schema.valueType as z.ZodType;
    if (values === Expression) return { kind: "map", values: "expression" };
    if (values === JsonValue) return { kind: "json", object: true };
    if (values instanceof z.ZodString)
      return { kind: "map", values: template ? "template" : "text" };
  }
  if (schema instanceof z.ZodObject)
    return { kind: "group", fields: fieldsOfShape(schema, [], `${path}.`) };
  // Anything else is still editable, as JSON.
  return { kind: "json", object: false };
}

function fieldsOfShape(
  schema: z.ZodObject,
  templates: readonly string[],
  prefix = "",
): BlockField[] {
  const fields: BlockField[] = [];
  for (const [name, field] of Object.entries(schema.shape)) {
    if (prefix === "" && EDITOR_FIELDS.has(name)) continue;
    const { inner, required } = unwrapOptional(field as z.ZodType);
    const path = `${prefix}${name}`;
    fields.push({ name, path, required, kind: kindOf(name, path, inner, templates) });
  }
  return fields;
}

const COMMON = new Set(["name", "timeoutMs", "retry"]);

/** Read once: the schemas do not change while the page runs. */
const FIELDS = Object.fromEntries(
  BLOCK_TYPES.map((type) => {
    const all = fieldsOfShape(BLOCK_SCHEMAS[type], TEMPLATE_FIELDS[type] ?? []);
    return [
      type,
      [...all.filter((f) => !COMMON.has(f.name)), ...all.filter((f) => COMMON.has(f.name))],
    ];
  }),
) as Record<BlockType, BlockField[]>;

/**
 * The form's fields for a block type, in the schema's order with the type's own fields
 * first (the ones every block carries — name, timeout, retry — come last).
 */
export function blockFields(type: BlockType): BlockField[] {
  return FIELDS[type];
}

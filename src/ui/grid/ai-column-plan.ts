/**
 * The "+ AI column" dialog's form and what creating it makes: one workflow whose single
 * llm block asks the model the prompt (column references read as workflow inputs), one
 * new typed column per output field, and a workflow group that maps each referenced
 * column to its input and each field of the answer to its column. The group runs the
 * workflow's live draft, so creating needs no deploy, and does not run by itself (a
 * paid column on a large table starts when someone runs it). The system prompt is sent as
 * written (the llm block renders only the prompt), so references belong in the prompt.
 * Pure, so it is unit-tested.
 */
import type { Column, ColumnType, TableView, WorkflowGroup } from "@/contracts/table";
import type { LlmBlock, WorkflowDefinition, WorkflowInput } from "@/contracts/workflow";
import { compileTemplate, promptReferences } from "./ai-prompt";
import { idFromName, slugify } from "./editor-ids";
import type { FieldErrors } from "./issue-paths";

export type AiProvider = NonNullable<LlmBlock["provider"]>;
export type AiFieldType = "text" | "number" | "boolean";
export const AI_FIELD_TYPES: readonly AiFieldType[] = ["text", "number", "boolean"];

/** The workflow's one block: the model call. Group outputs read `ai.<path>`. */
export const AI_BLOCK_ID = "ai";

export const PROVIDERS: readonly { id: AiProvider; label: string }[] = [
  { id: "openai", label: "OpenAI-compatible" },
  { id: "anthropic", label: "Anthropic" },
];

/** Offered in the model field; any other name can be typed. */
export const MODEL_SUGGESTIONS: Record<AiProvider, readonly string[]> = {
  openai: ["gpt-4o-mini", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4o"],
  anthropic: ["claude-3-5-haiku-latest", "claude-sonnet-4-0", "claude-opus-4-0"],
};

/** The highest temperature each provider takes. */
const MAX_TEMPERATURE: Record<AiProvider, number> = { openai: 2, anthropic: 1 };
const MAX_FIELDS = 20;
const MAX_OUTPUT_TOKENS = 1_000_000;

export interface AiField {
  /** Stable across edits, for React keys and field errors. */
  key: string;
  /** The column the field fills (and, as an id, its name in the answer). */
  name: string;
  type: AiFieldType;
}

export interface AiColumnForm {
  /** The group's name, and the column's when one unnamed field is the answer. */
  name: string;
  prompt: string;
  system: string;
  provider: AiProvider;
  model: string;
  /** Blank: the provider's (or the server's configured) endpoint. */
  baseUrl: string;
  temperature: string;
  /** Blank: the server's default. */
  maxTokens: string;
  fields: AiField[];
}

let fieldSeq = 0;
export function newAiField(name = "", type: AiFieldType = "text"): AiField {
  fieldSeq += 1;
  return { key: `f${fieldSeq}`, name, type };
}

export function emptyAiForm(): AiColumnForm {
  return {
    name: "",
    prompt: "",
    system: "",
    provider: "openai",
    model: MODEL_SUGGESTIONS.openai[0] ?? "",
    baseUrl: "",
    // 0: the same row asks the same question, so the answer can come from the cache.
    temperature: "0",
    maxTokens: "",
    fields: [newAiField()],
  };
}

/** Error keys of the form's per-field inputs. */
export const aiFieldError = (key: string) => `field.${key}`;

/** The column name a field fills: its own, or the AI column's name for a lone unnamed field. */
export function fieldColumnName(
  form: Pick<AiColumnForm, "name" | "fields">,
  field: AiField,
): string {
  const own = field.name.trim();
  return own === "" && form.fields.length === 1 ? form.name.trim() : own;
}

/** A field's name in the model's JSON answer. */
export const answerKey = (name: string): string => slugify(name, "field");

const JSON_TYPE: Record<AiFieldType, string> = {
  text: "string",
  number: "number",
  boolean: "boolean",
};

export interface AnswerShape {
  /** The JSON Schema the answer must follow; null: a plain text answer. */
  jsonSchema: LlmBlock["jsonSchema"] | null;
  /** Per field, where its value is in the block's output. */
  paths: string[];
}

/**
 * How the model answers: one text field is its plain text (`{ text }`); otherwise a JSON
 * object with one property per field (each required, nothing else allowed, as strict
 * structured output asks).
 */
export function answerShape(fields: readonly { name: string; type: AiFieldType }[]): AnswerShape {
  const [only] = fields;
  if (fields.length === 1 && only?.type === "text") return { jsonSchema: null, paths: ["text"] };
  const keys = fields.map((f) => answerKey(f.name));
  return {
    jsonSchema: {
      type: "object",
      properties: Object.fromEntries(fields.map((f, i) => [keys[i], { type: JSON_TYPE[f.type] }])),
      required: keys,
      additionalProperties: false,
    },
    paths: keys,
  };
}

const INPUT_TYPE: Record<ColumnType, WorkflowInput["type"]> = {
  text: "text",
  number: "number",
  boolean: "boolean",
  date: "date",
  json: "json",
  select: "text",
};

export interface PlannedField {
  name: string;
  type: AiFieldType;
  columnId: string;
  /** The group output's `from`. */
  from: string;
}

export interface AiColumnPlan {
  workflow: { name: string; definition: WorkflowDefinition };
  /** The new output columns, in field order. */
  columns: Column[];
  /** The group, once its workflow has an id. */
  group: Omit<WorkflowGroup, "workflowId">;
  fields: PlannedField[];
  /** The columns the prompt reads: the workflow's inputs, named by column id. */
  reads: Column[];
}

export type Planned = { ok: true; plan: AiColumnPlan } | { ok: false; errors: FieldErrors };

function unknownRefs(refs: readonly string[]): string {
  const shown = refs.map((r) => `“{{${r}}}”`).join(", ");
  return `${shown} ${refs.length === 1 ? "is not a column" : "are not columns"} of this table`;
}

function numberIn(text: string, min: number, max: number, integer: boolean): number | null {
  const t = text.trim();
  if (!(integer ? /^\d+$/ : /^\d+(\.\d+)?$/).test(t)) return null;
  const n = Number(t);
  return n >= min && n <= max ? n : null;
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

/** The form's checks, with the parsed numbers when they pass. */
function checkSettings(form: AiColumnForm, errors: FieldErrors) {
  if (form.model.trim() === "") errors.model = "Name the model";
  const baseUrl = form.baseUrl.trim();
  if (baseUrl !== "" && !isHttpUrl(baseUrl))
    errors.baseUrl = "An http(s) URL, or blank for the default endpoint";
  const maxT = MAX_TEMPERATURE[form.provider];
  const temperature = numberIn(form.temperature, 0, maxT, false);
  if (temperature === null) errors.temperature = `A number from 0 to ${maxT}`;
  const maxTokens =
    form.maxTokens.trim() === "" ? null : numberIn(form.maxTokens, 1, MAX_OUTPUT_TOKENS, true);
  if (form.maxTokens.trim() !== "" && maxTokens === null)
    errors.maxTokens = `A whole number from 1 to ${MAX_OUTPUT_TOKENS.toLocaleString("en")}, or blank`;
  return { baseUrl, temperature: temperature ?? 0, maxTokens };
}

function checkFields(
  table: Pick<TableView, "columns">,
  form: AiColumnForm,
  errors: FieldErrors,
): void {
  if (form.fields.length === 0) errors.fields = "Add at least one output field";
  if (form.fields.length > MAX_FIELDS) errors.fields = `At most ${MAX_FIELDS} output fields`;
  const existing = new Set(table.columns.map((c) => c.name.trim().toLowerCase()));
  const seen = new Set<string>();
  for (const field of form.fields) {
    const name = fieldColumnName(form, field);
    const key = aiFieldError(field.key);
    if (name === "") errors[key] = "Name the field (it becomes the column’s name)";
    else if (name.length > 200) errors[key] = "At most 200 characters";
    else if (existing.has(name.toLowerCase()))
      errors[key] = `The table already has a column “${name}”`;
    else if (seen.has(answerKey(name))) errors[key] = "Two fields have this name";
    seen.add(answerKey(name));
  }
}

/** What creating the form makes, or why it can't be created yet (errors by field). */
export function planAiColumn(
  table: Pick<TableView, "columns" | "groups">,
  form: AiColumnForm,
): Planned {
  const errors: FieldErrors = {};
  const name = form.name.trim();
  if (name === "") errors.name = "Name the AI column";
  else if (name.length > 200) errors.name = "At most 200 characters";
  if (form.prompt.trim() === "") errors.prompt = "Write what to ask about each row";
  const refs = promptReferences([form.prompt], table.columns);
  if (refs.unknown.length > 0) errors.prompt = unknownRefs(refs.unknown);
  if (/\{\{[\s\S]*?\}\}/.test(form.system))
    errors.system = "The system prompt is sent as written: put column references in the prompt";
  const settings = checkSettings(form, errors);
  checkFields(table, form, errors);
  if (Object.keys(errors).length > 0) return { ok: false, errors };

  const reads = refs.columns;
  const named = form.fields.map((f) => ({ name: fieldColumnName(form, f), type: f.type }));
  const shape = answerShape(named);
  const taken = table.columns.map((c) => c.id);
  const fields: PlannedField[] = named.map((f, i) => {
    const columnId = idFromName(f.name, taken);
    taken.push(columnId);
    return { ...f, columnId, from: `${AI_BLOCK_ID}.${shape.paths[i] ?? "text"}` };
  });
  const system = form.system.trim() === "" ? null : form.system;
  const block: LlmBlock = {
    id: AI_BLOCK_ID,
    type: "llm",
    provider: form.provider,
    ...(settings.baseUrl !== "" ? { baseUrl: settings.baseUrl } : {}),
    model: form.model.trim(),
    ...(system !== null ? { system } : {}),
    prompt: compileTemplate(form.prompt, table.columns),
    ...(shape.jsonSchema ? { jsonSchema: shape.jsonSchema } : {}),
    temperature: settings.temperature,
    ...(settings.maxTokens !== null ? { maxTokens: settings.maxTokens } : {}),
  };
  return {
    ok: true,
    plan: {
      workflow: {
        name,
        definition: {
          // Required: a row missing one is skipped (nothing asked, nothing charged).
          inputs: reads.map((c) => ({ name: c.id, type: INPUT_TYPE[c.type], required: true })),
          blocks: [block],
        },
      },
      columns: fields.map((f) => ({ id: f.columnId, name: f.name, type: f.type })),
      group: {
        id: idFromName(
          name,
          table.groups.map((g) => g.id),
          "group",
        ),
        name,
        kind: "workflow",
        version: "live",
        inputs: Object.fromEntries(reads.map((c) => [c.id, c.id])),
        outputs: fields.map((f) => ({ columnId: f.columnId, from: f.from })),
        dependsOn: reads.map((c) => c.id),
        autoRun: false,
      },
      fields,
      reads,
    },
  };
}

/** The `PATCH /api/tables/:id` body that adds the plan's columns and group. */
export function tablePatchBody(
  table: Pick<TableView, "columns" | "groups">,
  plan: AiColumnPlan,
  workflowId: string,
): { columns: Column[]; groups: TableView["groups"] } {
  return {
    columns: [...table.columns, ...plan.columns],
    groups: [...table.groups, { ...plan.group, workflowId }],
  };
}

/** The workflow's inputs for one row: each referenced column's value (blank: null). */
export function tryInputs(
  plan: Pick<AiColumnPlan, "reads">,
  data: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return Object.fromEntries(plan.reads.map((c) => [c.id, data[c.id] ?? null]));
}

/**
 * The group editor's waterfall steps: each step's form (its source, input columns, the
 * step output that fills each of the group's output names, and its checks), the steps of
 * a saved group as forms and back, and the checks made before saving. A waterfall's
 * output names are the `from` of the group's output rows.
 */
import type { EnrichmentView } from "@/contracts/enrichments";
import type { WaterfallGroup, WaterfallStep } from "@/contracts/table";
import { WHERE_OPS, type WhereOp } from "@/contracts/where";

/** What of the group form the steps read (its output rows' names, its steps). */
interface WaterfallForm {
  outputs: readonly { from: string }[];
  steps: readonly StepForm[];
}

export const WATERFALL_OPS: readonly WhereOp[] = WHERE_OPS;

/** A waterfall output name, as the API takes it. */
export const OUTPUT_NAME = /^[a-z][a-z0-9_]{0,62}$/;

export interface StepCheckRow {
  key: string;
  output: string;
  op: WhereOp;
  /** As typed; a number when it reads as one. */
  value: string;
}

export interface StepForm {
  key: string;
  /** `enrichment:<id>`, `workflow:<id>`, or "" (not chosen yet). */
  source: string;
  version: "live" | "deployed";
  /** Input name → column id ("" = not mapped). */
  inputs: Record<string, string>;
  /** Output name → the step's output path ("" = not mapped). */
  outputs: Record<string, string>;
  validate: StepCheckRow[];
}

let seq = 0;
const nextKey = (prefix: string) => {
  seq += 1;
  return `${prefix}${seq}`;
};

export function emptyStep(): StepForm {
  return { key: nextKey("s"), source: "", version: "live", inputs: {}, outputs: {}, validate: [] };
}

export function checkRow(output = ""): StepCheckRow {
  return { key: nextKey("v"), output, op: "not_empty", value: "" };
}

export function stepFormFrom(step: WaterfallStep): StepForm {
  const isEnrichment = "enrichmentId" in step;
  return {
    key: nextKey("s"),
    source: isEnrichment ? `enrichment:${step.enrichmentId}` : `workflow:${step.workflowId}`,
    version: isEnrichment ? "live" : step.version,
    inputs: { ...step.inputs },
    outputs: { ...step.outputs },
    validate: (step.validate ?? []).map((v) => ({
      key: nextKey("v"),
      output: v.output,
      op: v.op,
      value: v.value === undefined ? "" : String(v.value),
    })),
  };
}

export function stepsFormFrom(group: WaterfallGroup | undefined): StepForm[] {
  return group ? group.steps.map(stepFormFrom) : [emptyStep()];
}

/** The source of a step: which kind and id (null when none is chosen). */
export function stepSource(
  s: Pick<StepForm, "source">,
): { kind: "enrichment" | "workflow"; id: string } | null {
  const at = s.source.indexOf(":");
  if (at < 0) return null;
  const kind = s.source.slice(0, at);
  const id = s.source.slice(at + 1);
  if (id === "" || (kind !== "enrichment" && kind !== "workflow")) return null;
  return { kind, id };
}

/** The group's output names: its output rows' `from`, as typed. */
export function waterfallOutputNames(form: Pick<WaterfallForm, "outputs">): string[] {
  return [...new Set(form.outputs.map((r) => r.from.trim()).filter((n) => n !== ""))];
}

function checkValue(row: StepCheckRow): string | number | undefined {
  if (row.op === "empty" || row.op === "not_empty") return undefined;
  const text = row.value.trim();
  return text !== "" && Number.isFinite(Number(text)) ? Number(text) : row.value;
}

/** The API's step for a form (null: no source chosen); unmapped inputs and outputs left out. */
export function stepFromForm(s: StepForm, outputNames: readonly string[]): WaterfallStep | null {
  const source = stepSource(s);
  if (!source) return null;
  const inputs = Object.fromEntries(Object.entries(s.inputs).filter(([, col]) => col !== ""));
  const outputs = Object.fromEntries(
    outputNames.flatMap((n) => {
      const path = (s.outputs[n] ?? "").trim();
      return path === "" ? [] : [[n, path]];
    }),
  );
  const validate = s.validate
    .filter((v) => v.output !== "")
    .map((v) => {
      const value = checkValue(v);
      return { output: v.output, op: v.op, ...(value === undefined ? {} : { value }) };
    });
  const rest = { inputs, outputs, ...(validate.length > 0 ? { validate } : {}) };
  return source.kind === "enrichment"
    ? { enrichmentId: source.id, ...rest }
    : { workflowId: source.id, version: s.version, ...rest };
}

export const stepField = {
  source: (key: string) => `step.${key}.source`,
  outputs: (key: string) => `step.${key}.outputs`,
};

/** Checks made before saving a waterfall (the API makes them again). */
export function validateSteps(
  form: WaterfallForm,
  enrichments: readonly EnrichmentView[] | null,
): Record<string, string> {
  const errors: Record<string, string> = {};
  if (form.steps.length === 0) errors.source = "Add at least one step";
  const names = waterfallOutputNames(form);
  for (const s of form.steps) {
    const source = stepSource(s);
    if (!source) {
      errors[stepField.source(s.key)] = "Choose what this step runs";
      continue;
    }
    if (source.kind === "enrichment" && enrichments && !enrichments.some((e) => e.id === source.id))
      errors[stepField.source(s.key)] = "Unknown enrichment";
    if (names.length > 0 && !names.some((n) => (s.outputs[n] ?? "").trim() !== ""))
      errors[stepField.outputs(s.key)] = "Map at least one output";
  }
  return errors;
}

/**
 * What a waterfall attempt's steps did, from its `details`: "1 rejected (5 cr) · 2 found
 * (5 cr) · 3 not called"; null when the details have no steps.
 */
export function stepsSummary(details: unknown): string | null {
  if (details === null || typeof details !== "object") return null;
  const steps = (details as { steps?: unknown }).steps;
  if (!Array.isArray(steps) || steps.length === 0) return null;
  return steps
    .map((raw: unknown) => {
      const s = (raw ?? {}) as { step?: unknown; status?: unknown; costCredits?: unknown };
      const status = String(s.status ?? "?").replace("_", " ");
      const cost =
        typeof s.costCredits === "number" && s.costCredits > 0 ? ` (${s.costCredits} cr)` : "";
      return `${String(s.step ?? "?")} ${status}${cost}`;
    })
    .join(" · ");
}

/** `[a, b, c]` with the item at `from` moved by `by` (a no-op past either end). */
export function moved<T>(items: readonly T[], from: number, by: -1 | 1): T[] {
  const to = from + by;
  const out = [...items];
  const a = out[from];
  const b = out[to];
  if (a === undefined || b === undefined) return out;
  out[from] = b;
  out[to] = a;
  return out;
}

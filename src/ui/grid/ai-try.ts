/**
 * "Try on this row": the row a try starts on, and the preview of the answer of
 * `POST /api/workflows/:id/test` field by field (or why there is none). Pure, so it is
 * unit-tested.
 */
import type { Schemas } from "@/client/cellflow-client";
import { AI_BLOCK_ID, type AiColumnPlan } from "./ai-column-plan";

/** The test endpoint's answer, as the typed client gives it. */
export type WorkflowTestAnswer = Schemas["TestWorkflowResponse"];

/** The row a try starts on: the first selected one the grid shows, else its first row. */
export function tryRowId(
  rows: readonly { id: string }[],
  selected: ReadonlySet<string>,
): string | null {
  return (rows.find((r) => selected.has(r.id)) ?? rows[0])?.id ?? null;
}

/** `a.b.c` read from `value`; undefined when the path is not there. */
function at(value: unknown, path: string): unknown {
  let v = value;
  for (const key of path.split(".")) {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

export interface PreviewValue {
  name: string;
  columnId: string;
  value: unknown;
}

export type Preview =
  | { ok: true; values: PreviewValue[]; costCredits: number }
  | { ok: false; error: string };

/**
 * What each output column would get from the answer; an answer that failed or paused
 * says why (the failing blocks' errors).
 */
export function previewOf(plan: Pick<AiColumnPlan, "fields">, answer: WorkflowTestAnswer): Preview {
  if (answer.status !== "completed") {
    const errors = answer.blocks.flatMap((b) => (b.error ? [`${b.id}: ${b.error}`] : []));
    // The run's own reason (a timeout) when no block's error says it.
    if (errors.length === 0 && answer.error) errors.push(answer.error);
    const what = answer.status === "paused" ? "The workflow paused" : "The try failed";
    return { ok: false, error: errors.length > 0 ? `${what}: ${errors.join("; ")}` : `${what}.` };
  }
  const block = answer.blocks.find((b) => b.id === AI_BLOCK_ID);
  const values = plan.fields.map((f) => {
    const value =
      block?.output !== undefined
        ? at({ [AI_BLOCK_ID]: block.output }, f.from)
        : at({ [AI_BLOCK_ID]: answer.outputs }, f.from);
    return { name: f.name, columnId: f.columnId, value: value ?? null };
  });
  return { ok: true, values, costCredits: answer.costCredits };
}

/** A previewed value as the grid would show it. */
export function shownValue(value: unknown): string {
  if (value === null || value === undefined) return "—";
  return typeof value === "string" ? value : JSON.stringify(value);
}

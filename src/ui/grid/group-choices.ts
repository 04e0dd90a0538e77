/**
 * What the group editor fills in for the person: inputs guessed from the columns, a
 * first output when a workflow or enrichment is picked, `from` values and names for new
 * output rows. Suggestions only; the person can change every one of them.
 */
import type { EnrichmentView } from "@/contracts/enrichments";
import type { Column } from "@/contracts/table";
import { humanize, slugify, uniqueName } from "./editor-ids";
import {
  enrichmentInputs,
  filledRows,
  type GroupForm,
  NEW_COLUMN,
  type OutputRow,
  outputRow,
  type SourceInput,
  type WorkflowInfo,
  workflowInputs,
} from "./group-form";

/**
 * Input mappings for a newly chosen source: keeps the mappings in `current` that still
 * name a column, and guesses the rest from column ids and names (`email` → a column
 * `email` or "E-mail"; then a column whose id contains the input name).
 */
export function suggestInputs(
  inputs: readonly SourceInput[],
  columns: readonly Column[],
  current: Record<string, string> = {},
): Record<string, string> {
  const ids = new Set(columns.map((c) => c.id));
  const out: Record<string, string> = {};
  for (const input of inputs) {
    const kept = current[input.name];
    if (kept !== undefined && ids.has(kept)) {
      out[input.name] = kept;
      continue;
    }
    const want = slugify(input.name, "x");
    const exact = columns.find(
      (c) => c.id === input.name || slugify(c.name, "x") === want || c.id === want,
    );
    const loose =
      exact ??
      (want.length >= 3
        ? columns.find((c) => c.id.includes(want) || slugify(c.name, "x").includes(want))
        : undefined);
    out[input.name] = loose?.id ?? "";
  }
  return out;
}

/** Block ids no `next` leaves from: the usual places a workflow's result comes from. */
export function terminalBlockIds(blocks: readonly { id: string; next?: unknown }[]): string[] {
  return blocks
    .filter((b) => {
      const n = b.next;
      if (n === undefined || n === null) return true;
      if (Array.isArray(n)) return n.length === 0;
      if (typeof n === "object") return Object.values(n).every((v) => v === undefined);
      return false;
    })
    .map((b) => b.id);
}

/** A `from` for a new workflow output row: the first end block not used yet. */
export function defaultFrom(
  blocks: readonly { id: string; next?: unknown }[],
  used: readonly string[],
): string {
  const ends = terminalBlockIds(blocks);
  const all = blocks.map((b) => b.id);
  return (
    ends.find((id) => !used.includes(id)) ??
    all.find((id) => !used.includes(id)) ??
    ends[0] ??
    all[0] ??
    ""
  );
}

/**
 * A name for a new output column: the output id made readable, prefixed with the group
 * name when a column (or another new output) already has that name.
 */
export function suggestOutputName(
  outputId: string,
  groupName: string,
  takenNames: Iterable<string>,
): string {
  const names = [...takenNames];
  const taken = new Set(names.map((n) => n.trim().toLowerCase()));
  const plain = humanize(outputId);
  if (!taken.has(plain.toLowerCase())) return plain;
  const prefixed = groupName.trim() === "" ? plain : `${groupName.trim()} ${plain.toLowerCase()}`;
  return uniqueName(prefixed, names);
}

/**
 * Rows for every enrichment output not yet mapped, each into a new column (typed from
 * the output by `buildGroupPatch`).
 */
export function addAllEnrichmentOutputs(
  form: Pick<GroupForm, "name" | "outputs">,
  enrichment: EnrichmentView,
  columns: readonly Column[],
): OutputRow[] {
  const rows = filledRows(form.outputs);
  const names = [
    ...columns.map((c) => c.name),
    ...rows.filter((r) => r.column === NEW_COLUMN).map((r) => r.newName),
  ];
  for (const out of enrichment.outputs) {
    if (rows.some((r) => r.from === out.id)) continue;
    const name = suggestOutputName(out.id, form.name || enrichment.name, names);
    names.push(name);
    rows.push(outputRow(out.id, NEW_COLUMN, name));
  }
  return rows;
}

/**
 * The form after a person picks a workflow: the group named after it when unnamed,
 * inputs guessed from the columns (mappings that still apply kept), and, when no output
 * row fits the workflow, one from its end block into a new column.
 */
export function applyWorkflowChoice(
  form: GroupForm,
  workflow: WorkflowInfo,
  columns: readonly Column[],
): GroupForm {
  const blocks = workflow.definition.blocks;
  const blockIds = blocks.map((b) => b.id);
  const name = form.name.trim() === "" ? workflow.name : form.name;
  const kept = filledRows(form.outputs).filter((r) =>
    blockIds.includes(r.from.trim().split(".")[0] ?? ""),
  );
  const outputs =
    kept.length > 0 || blocks.length === 0
      ? kept
      : [
          outputRow(
            defaultFrom(blocks, []),
            NEW_COLUMN,
            uniqueName(
              name,
              columns.map((c) => c.name),
            ),
          ),
        ];
  return {
    ...form,
    name,
    inputs: suggestInputs(workflowInputs(workflow), columns, form.inputs),
    outputs,
  };
}

/** The same for an enrichment: its first output into a new column when none fits. */
export function applyEnrichmentChoice(
  form: GroupForm,
  enrichment: EnrichmentView,
  columns: readonly Column[],
): GroupForm {
  const name = form.name.trim() === "" ? enrichment.name : form.name;
  const outputIds = enrichment.outputs.map((o) => o.id);
  const kept = filledRows(form.outputs).filter((r) => outputIds.includes(r.from.trim()));
  const first = enrichment.outputs[0];
  const outputs =
    kept.length > 0 || first === undefined
      ? kept
      : [
          outputRow(
            first.id,
            NEW_COLUMN,
            suggestOutputName(
              first.id,
              name,
              columns.map((c) => c.name),
            ),
          ),
        ];
  return {
    ...form,
    kind: "enrichment",
    enrichmentId: enrichment.id,
    name,
    inputs: suggestInputs(enrichmentInputs(enrichment), columns, form.inputs),
    outputs,
  };
}

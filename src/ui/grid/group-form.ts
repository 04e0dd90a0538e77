/**
 * The group editor's form state and the facts derived from it: output rows (existing or
 * "New column…"), the form from a saved group, a source's inputs, the type of a new
 * output column, which group already fills a column, the default dependencies, and the
 * labels the editor shows for columns and costs.
 */
import type { EnrichmentView } from "@/contracts/enrichments";
import type { Column, ColumnType, Group, RunCondition } from "@/contracts/table";
import { type StepForm, stepsFormFrom } from "./waterfall-form";

/** The `column` value of an output row that creates a column. Not a valid column id. */
export const NEW_COLUMN = "+new";

export interface OutputRow {
  /** Stable across edits, for React keys and for field errors. */
  key: string;
  from: string;
  /** An existing column id, `NEW_COLUMN`, or "" (not chosen yet). */
  column: string;
  /** The new column's name when `column` is `NEW_COLUMN`. */
  newName: string;
}

export type GroupKind = Group["kind"];

export interface GroupForm {
  name: string;
  id: string;
  kind: GroupKind;
  workflowId: string;
  version: "live" | "deployed";
  enrichmentId: string;
  /** Input name → column id ("" = not mapped). */
  inputs: Record<string, string>;
  outputs: OutputRow[];
  dependsOn: string[];
  autoRun: boolean;
  /** Run conditions (column conditions, all must hold); none: it runs on every row. */
  runIf: RunCondition[];
  /** A waterfall's steps, in order (the outputs' `from` are its output names). */
  steps: StepForm[];
}

/** A workflow or enrichment input as the editor lists it. */
export interface SourceInput {
  name: string;
  type?: string;
  required: boolean;
  description?: string;
}

// Row keys only need to be unique within the page, not stable across reloads.
let rowSeq = 0;
export function outputRow(from = "", column = "", newName = ""): OutputRow {
  rowSeq += 1;
  return { key: `o${rowSeq}`, from, column, newName };
}

export function groupFormFrom(group?: Group): GroupForm {
  return {
    name: group?.name ?? "",
    id: group?.id ?? "",
    kind: group?.kind ?? "workflow",
    workflowId: group?.kind === "workflow" ? group.workflowId : "",
    version: group?.kind === "workflow" ? group.version : "live",
    enrichmentId: group?.kind === "enrichment" ? group.enrichmentId : "",
    inputs: group && group.kind !== "waterfall" ? { ...group.inputs } : {},
    outputs: (group?.outputs ?? []).map((o) => outputRow(o.from, o.columnId)),
    dependsOn: [...(group?.dependsOn ?? [])],
    autoRun: group?.autoRun ?? false,
    runIf: [...(group?.runIf ?? [])],
    steps: stepsFormFrom(group?.kind === "waterfall" ? group : undefined),
  };
}

/** An enrichment field type as a column type (unknown types become text). */
export function enrichmentColumnType(type: string): ColumnType {
  switch (type) {
    case "number":
    case "boolean":
    case "json":
    case "text":
      return type;
    default:
      return "text";
  }
}

/** The column type a new output column gets: text for workflows, the output's type for enrichments. */
export function newOutputColumnType(
  kind: GroupKind,
  from: string,
  enrichment?: EnrichmentView | null,
): ColumnType {
  if (kind !== "enrichment") return "text";
  const out = enrichment?.outputs.find((o) => o.id === from.trim());
  return out ? enrichmentColumnType(out.type) : "text";
}

/** Column id → name of the group (other than `exceptGroupId`) that writes it. */
export function columnOwners(
  groups: readonly Group[],
  exceptGroupId?: string,
): Map<string, string> {
  const owners = new Map<string, string>();
  for (const g of groups) {
    if (g.id === exceptGroupId) continue;
    for (const o of g.outputs) owners.set(o.columnId, g.name);
  }
  return owners;
}

/** Input names the group should keep: those of the chosen source, or all when unknown. */
export function keptInputs(
  inputs: Record<string, string>,
  inputNames: readonly string[] | null,
): [string, string][] {
  return Object.entries(inputs).filter(
    ([name, col]) => col !== "" && (inputNames === null || inputNames.includes(name)),
  );
}

/**
 * The default dependencies: the mapped input columns, in table order, without the
 * group's own output columns (a group may not wait on what it writes).
 */
export function defaultDependsOn(
  form: Pick<GroupForm, "inputs" | "outputs">,
  columns: readonly Column[],
  inputNames: readonly string[] | null,
): string[] {
  const mapped = new Set(keptInputs(form.inputs, inputNames).map(([, col]) => col));
  const own = new Set(form.outputs.map((o) => o.column));
  return columns.filter((c) => mapped.has(c.id) && !own.has(c.id)).map((c) => c.id);
}

/** Same members, any order. */
export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}

/** What the editor needs of a workflow (`GET /api/workflows/:id`). */
export interface WorkflowInfo {
  name: string;
  definition: {
    inputs: readonly { name: string; type?: string; required?: boolean }[];
    blocks: readonly { id: string; type?: string; next?: unknown }[];
  };
}

export function workflowInputs(workflow: WorkflowInfo): SourceInput[] {
  return workflow.definition.inputs.map((i) => ({
    name: i.name,
    required: i.required ?? false,
    ...(i.type !== undefined ? { type: i.type } : {}),
  }));
}

export function enrichmentInputs(enrichment: EnrichmentView): SourceInput[] {
  return enrichment.inputs.map((i) => ({
    name: i.id,
    type: i.type,
    required: i.required,
    ...(i.description !== undefined ? { description: i.description } : {}),
  }));
}

/** Output rows with anything typed or chosen in them (blank rows are dropped). */
export function filledRows(rows: readonly OutputRow[]): OutputRow[] {
  return rows.filter((r) => r.from.trim() !== "" || r.column !== "" || r.newName.trim() !== "");
}

/** Field keys of the group form (for errors). */
export const groupField = {
  input: (name: string) => `input.${name}`,
  outputFrom: (rowKey: string) => `output.${rowKey}.from`,
  outputColumn: (rowKey: string) => `output.${rowKey}.column`,
};

/** "1 credit", "3 credits". */
export function credits(n: number): string {
  return `${n} credit${n === 1 ? "" : "s"}`;
}

/** A column in a picker: its name, with the id when the two differ. */
export function columnLabel(c: Column): string {
  return c.name === c.id ? c.name : `${c.name} (${c.id})`;
}

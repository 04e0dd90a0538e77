/**
 * What the group form knows of the source it has chosen, as far as it has loaded: the
 * workflow (read in full) or the enrichment, or why the workflow could not be read; the
 * source's inputs, block ids and output ids; whether it is still loading; and the
 * deployed version (from the workflow, else from the list while it loads). The form's
 * own facts that follow from it: the id derived from the name, the fields shown, the
 * names a new column may not take, and what a new output row starts as.
 */
import type { EnrichmentView } from "@/contracts/enrichments";
import type { Column, Group } from "@/contracts/table";
import type { WorkflowAnswer } from "../api";
import { idFromName, uniqueName } from "./editor-ids";
import { defaultFrom, suggestOutputName } from "./group-choices";
import {
  enrichmentInputs,
  type GroupForm,
  groupField,
  NEW_COLUMN,
  type OutputRow,
  type SourceInput,
  workflowInputs,
} from "./group-form";
import type { Loadable, WorkflowDetail } from "./use-group-sources";

type Block = WorkflowAnswer["definition"]["blocks"][number];

export interface ChosenSource {
  workflow: WorkflowAnswer | null;
  workflowFailed: string | null;
  enrichment: EnrichmentView | null;
  sourceInputs: SourceInput[] | null;
  inputNames: string[] | null;
  blocks: Block[];
  outputIds: string[] | null;
  sourceLoading: boolean;
  listedWorkflow: WorkflowAnswer | undefined;
  deployedVersion: number | null;
}

export function chosenSource(
  form: Pick<GroupForm, "kind" | "workflowId" | "enrichmentId">,
  detail: WorkflowDetail | null,
  catalogues: {
    workflows: Loadable<WorkflowAnswer[]>;
    enrichments: Loadable<EnrichmentView[]>;
  },
): ChosenSource {
  const { workflows, enrichments } = catalogues;
  const chosen = form.kind === "workflow" && detail?.id === form.workflowId ? detail : null;
  const workflow = chosen?.state === "ready" ? chosen.value : null;
  const enrichment =
    form.kind === "enrichment" && enrichments.state === "ready"
      ? (enrichments.value.find((e) => e.id === form.enrichmentId) ?? null)
      : null;
  // A waterfall's inputs are its steps': the group itself maps none.
  const sourceInputs: SourceInput[] | null =
    form.kind === "waterfall"
      ? []
      : workflow
        ? workflowInputs(workflow)
        : enrichment
          ? enrichmentInputs(enrichment)
          : null;
  const listedWorkflow =
    workflows.state === "ready" ? workflows.value.find((w) => w.id === form.workflowId) : undefined;
  return {
    workflow,
    workflowFailed: chosen?.state === "error" ? chosen.message : null,
    enrichment,
    sourceInputs,
    inputNames: sourceInputs?.map((i) => i.name) ?? null,
    blocks: workflow?.definition.blocks ?? [],
    outputIds: form.kind === "enrichment" ? (enrichment?.outputs.map((o) => o.id) ?? null) : null,
    sourceLoading:
      (form.kind === "waterfall" &&
        (enrichments.state === "loading" || workflows.state === "loading")) ||
      (form.kind === "workflow" &&
        form.workflowId !== "" &&
        (detail?.id !== form.workflowId || detail.state === "loading")) ||
      (form.kind === "enrichment" && enrichments.state === "loading"),
    listedWorkflow,
    deployedVersion: workflow?.deployedVersion ?? listedWorkflow?.deployedVersion ?? null,
  };
}

/** The id that follows the name while the id is untouched ("" without a name). */
export function idForName(name: string, groups: readonly Pick<Group, "id">[]): string {
  if (name.trim() === "") return "";
  return idFromName(
    name,
    groups.map((g) => g.id),
    "group",
  );
}

/** Fields the form always shows, whatever the source (for placing API issues). */
const BASE_FIELDS = [
  "name",
  "id",
  "kind",
  "source",
  "version",
  "inputs",
  "outputs",
  "dependsOn",
  "autoRun",
  "runIf",
];

/** Every field the form shows: the base ones, each input's and each output row's. */
export function shownFields(
  inputs: readonly Pick<SourceInput, "name">[],
  outputs: readonly Pick<OutputRow, "key">[],
): Set<string> {
  return new Set([
    ...BASE_FIELDS,
    ...inputs.map((i) => groupField.input(i.name)),
    ...outputs.flatMap((r) => [groupField.outputFrom(r.key), groupField.outputColumn(r.key)]),
  ]);
}

/** Names a new column may not take: the table's columns and the other new outputs. */
export function takenNames(
  columns: readonly Pick<Column, "name">[],
  outputs: readonly OutputRow[],
  except?: string,
): string[] {
  return [
    ...columns.map((c) => c.name),
    ...outputs.filter((r) => r.key !== except && r.column === NEW_COLUMN).map((r) => r.newName),
  ];
}

/**
 * A name for the new column of an output row reading `from`: a workflow's only output is
 * named after the group (or the workflow), any other after its output.
 */
export function newColumnName(
  form: Pick<GroupForm, "kind" | "name" | "outputs">,
  workflowName: string | undefined,
  from: string,
  others: readonly string[],
): string {
  if (form.kind === "workflow" && form.outputs.length === 1) {
    return uniqueName(form.name.trim() || workflowName || "Result", others);
  }
  return suggestOutputName(from || "output", form.name, others);
}

/**
 * What an added output row starts as: the next unused block (a workflow) or output (an
 * enrichment) into a new column named after it, or empty when there is none to offer.
 */
export function nextOutput(
  form: Pick<GroupForm, "kind" | "name" | "outputs">,
  blocks: readonly Block[],
  enrichment: EnrichmentView | null,
  taken: readonly string[],
): { from: string; column: string; newName: string } {
  const used = form.outputs.map((r) => r.from.trim());
  let from = "";
  if (form.kind === "workflow" && blocks.length > 0) from = defaultFrom(blocks, used);
  if (form.kind === "enrichment" && enrichment) {
    from = enrichment.outputs.find((o) => !used.includes(o.id))?.id ?? "";
  }
  if (from === "") return { from, column: "", newName: "" };
  return {
    from,
    column: NEW_COLUMN,
    newName: suggestOutputName(from, form.name || enrichment?.name || "", taken),
  };
}

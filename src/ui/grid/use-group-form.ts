"use client";
/**
 * The group editor's state: the form, what was loaded for its source, everything derived
 * from them (the chosen workflow or enrichment, its inputs, the id and dependencies that
 * follow the form until touched, the checks, each field's error) and the edits the
 * sections make. Saving stays with the editor.
 */
import { useEffect, useRef, useState } from "react";
import type { Group, TableView } from "@/contracts/table";
import { idFromName, uniqueName } from "./editor-ids";
import {
  addAllEnrichmentOutputs,
  applyEnrichmentChoice,
  applyWorkflowChoice,
  defaultFrom,
  suggestOutputName,
} from "./group-choices";
import {
  columnOwners,
  defaultDependsOn,
  enrichmentInputs,
  type GroupForm,
  type GroupKind,
  groupField,
  groupFormFrom,
  NEW_COLUMN,
  type OutputRow,
  outputRow,
  type SourceInput,
  sameSet,
  workflowInputs,
} from "./group-form";
import { validateGroupForm } from "./group-patch";
import type { FieldErrors } from "./issue-paths";
import { useSourceCatalogues, useWorkflowDetail } from "./use-group-sources";

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
];

export type GroupFormState = ReturnType<typeof useGroupForm>;

export function useGroupForm(table: TableView, group?: Group) {
  const editing = group !== undefined;
  const [form, setForm] = useState<GroupForm>(() => groupFormFrom(group));
  const [idTouched, setIdTouched] = useState(editing);
  // While untouched, the dependencies follow the mapped inputs.
  const [dependsTouched, setDependsTouched] = useState(
    () =>
      group !== undefined &&
      !sameSet(group.dependsOn, defaultDependsOn(groupFormFrom(group), table.columns, null)),
  );
  const { workflows, enrichments } = useSourceCatalogues();
  /** The workflow a person just picked: its defaults apply once it has loaded. */
  const pickedWorkflow = useRef<string | null>(null);
  // The chosen workflow, for its inputs and block ids.
  const detail = useWorkflowDetail(form.kind === "workflow" ? form.workflowId : "");
  const [attempted, setAttempted] = useState(false);
  const [serverErrors, setServerErrors] = useState<FieldErrors>({});

  // A workflow a person picked fills in the inputs and a first output once loaded.
  useEffect(() => {
    if (detail?.state !== "ready" || pickedWorkflow.current !== detail.id) return;
    pickedWorkflow.current = null;
    setForm((f) => applyWorkflowChoice(f, detail.value, table.columns));
  }, [detail, table.columns]);

  // ------------------------------------------------------------------ derived state
  const workflow =
    form.kind === "workflow" && detail?.id === form.workflowId && detail.state === "ready"
      ? detail.value
      : null;
  const workflowFailed =
    form.kind === "workflow" && detail?.id === form.workflowId && detail.state === "error"
      ? detail.message
      : null;
  const enrichment =
    form.kind === "enrichment" && enrichments.state === "ready"
      ? (enrichments.value.find((e) => e.id === form.enrichmentId) ?? null)
      : null;
  const sourceInputs: SourceInput[] | null = workflow
    ? workflowInputs(workflow)
    : enrichment
      ? enrichmentInputs(enrichment)
      : null;
  const inputNames = sourceInputs?.map((i) => i.name) ?? null;
  const blocks = workflow?.definition.blocks ?? [];
  const blockIds = blocks.map((b) => b.id);
  const outputIds =
    form.kind === "enrichment" ? (enrichment?.outputs.map((o) => o.id) ?? null) : null;
  const sourceLoading =
    (form.kind === "workflow" &&
      form.workflowId !== "" &&
      (detail?.id !== form.workflowId || detail.state === "loading")) ||
    (form.kind === "enrichment" && enrichments.state === "loading");
  const listedWorkflow =
    workflows.state === "ready" ? workflows.value.find((w) => w.id === form.workflowId) : undefined;
  const deployedVersion = workflow?.deployedVersion ?? listedWorkflow?.deployedVersion ?? null;

  const groupId = idTouched
    ? form.id
    : form.name.trim() === ""
      ? ""
      : idFromName(
          form.name,
          table.groups.map((g) => g.id),
          "group",
        );
  const dependsOn = dependsTouched
    ? form.dependsOn
    : defaultDependsOn(form, table.columns, inputNames);
  const current: GroupForm = { ...form, id: groupId, dependsOn };
  const checks = validateGroupForm(table, current, {
    ...(group ? { editingId: group.id } : {}),
    inputs: sourceInputs,
    outputIds,
    blockIds: workflow ? blockIds : null,
  });
  const errorOf = (key: string): string | undefined =>
    serverErrors[key] ?? (attempted || (key === "id" && idTouched) ? checks[key] : undefined);

  const owners = columnOwners(table.groups, group?.id);
  const ownOutputs = new Set(form.outputs.map((r) => r.column));
  /** Inputs listed in the form: the source's, or (not loaded) the ones already mapped. */
  const shownInputs: SourceInput[] =
    sourceInputs ?? Object.keys(form.inputs).map((name) => ({ name, required: false }));
  const shownFields = new Set([
    ...BASE_FIELDS,
    ...shownInputs.map((i) => groupField.input(i.name)),
    ...form.outputs.flatMap((r) => [groupField.outputFrom(r.key), groupField.outputColumn(r.key)]),
  ]);
  const takenNames = (except?: string) => [
    ...table.columns.map((c) => c.name),
    ...form.outputs
      .filter((r) => r.key !== except && r.column === NEW_COLUMN)
      .map((r) => r.newName),
  ];

  // ------------------------------------------------------------------ editing
  const clearErrors = (...keys: string[]) => {
    if (keys.every((k) => serverErrors[k] === undefined)) return;
    setServerErrors((e) => {
      const next = { ...e };
      for (const k of keys) delete next[k];
      return next;
    });
  };
  const update = (patch: Partial<GroupForm>, ...keys: string[]) => {
    setForm((f) => ({ ...f, ...patch }));
    clearErrors(...keys);
  };
  const updateRow = (key: string, patch: Partial<OutputRow>, field: "from" | "column") => {
    setForm((f) => ({
      ...f,
      outputs: f.outputs.map((r) => (r.key === key ? { ...r, ...patch } : r)),
    }));
    clearErrors(field === "from" ? groupField.outputFrom(key) : groupField.outputColumn(key));
  };

  const chooseKind = (kind: GroupKind) => update({ kind }, "kind", "source");

  const chooseWorkflow = (id: string) => {
    pickedWorkflow.current = id === "" ? null : id;
    update({ workflowId: id }, "source");
  };

  const chooseEnrichment = (id: string) => {
    const picked =
      enrichments.state === "ready" ? enrichments.value.find((e) => e.id === id) : undefined;
    setForm((f) =>
      picked ? applyEnrichmentChoice(f, picked, table.columns) : { ...f, enrichmentId: id },
    );
    clearErrors("source");
  };

  /** A name for the new column of `row` (output `from`). */
  const newColumnName = (row: OutputRow, from: string): string => {
    const others = takenNames(row.key);
    if (form.kind === "workflow" && form.outputs.length === 1) {
      return uniqueName(form.name.trim() || workflow?.name || "Result", others);
    }
    return suggestOutputName(from || "output", form.name, others);
  };

  const addOutput = () => {
    const used = form.outputs.map((r) => r.from.trim());
    let from = "";
    if (form.kind === "workflow" && blocks.length > 0) from = defaultFrom(blocks, used);
    if (form.kind === "enrichment" && enrichment) {
      from = enrichment.outputs.find((o) => !used.includes(o.id))?.id ?? "";
    }
    const name =
      from === "" ? "" : suggestOutputName(from, form.name || enrichment?.name || "", takenNames());
    setForm((f) => ({
      ...f,
      outputs: [...f.outputs, outputRow(from, from === "" ? "" : NEW_COLUMN, name)],
    }));
  };

  const addAllOutputs = () => {
    if (!enrichment) return;
    setForm((f) => ({ ...f, outputs: addAllEnrichmentOutputs(f, enrichment, table.columns) }));
  };

  const removeOutput = (key: string) => {
    setForm((f) => ({ ...f, outputs: f.outputs.filter((r) => r.key !== key) }));
    clearErrors(groupField.outputFrom(key), groupField.outputColumn(key), "outputs");
  };

  const toggleDependency = (columnId: string) => {
    setDependsTouched(true);
    const next = dependsOn.includes(columnId)
      ? dependsOn.filter((c) => c !== columnId)
      : [...dependsOn, columnId];
    update({ dependsOn: next }, "dependsOn");
  };

  const invalid = (key: string) => (errorOf(key) ? " invalid" : "");
  const resetDependencies = () => {
    setDependsTouched(false);
    clearErrors("dependsOn");
  };

  return {
    form,
    setIdTouched,
    dependsTouched,
    resetDependencies,
    attempted,
    setAttempted,
    setServerErrors,
    workflows,
    enrichments,
    workflow,
    workflowFailed,
    enrichment,
    sourceInputs,
    inputNames,
    blocks,
    outputIds,
    sourceLoading,
    listedWorkflow,
    deployedVersion,
    groupId,
    dependsOn,
    current,
    checks,
    errorOf,
    invalid,
    owners,
    ownOutputs,
    shownInputs,
    shownFields,
    update,
    updateRow,
    chooseKind,
    chooseWorkflow,
    chooseEnrichment,
    newColumnName,
    addOutput,
    addAllOutputs,
    removeOutput,
    toggleDependency,
  };
}

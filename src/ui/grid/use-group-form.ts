"use client";
/**
 * The group editor's state: the form, what was loaded for its source, everything derived
 * from them (the chosen workflow or enrichment and its inputs: `chosenSource`; the id and
 * dependencies that follow the form until touched, the checks, each field's error) and
 * the edits the sections make (`groupFormEdits`). Saving stays with the editor.
 */
import { useEffect, useRef, useState } from "react";
import type { Group, TableView } from "@/contracts/table";
import { chosenSource, idForName, shownFields } from "./chosen-source";
import { applyWorkflowChoice } from "./group-choices";
import {
  columnOwners,
  defaultDependsOn,
  type GroupForm,
  groupFormFrom,
  type SourceInput,
  sameSet,
} from "./group-form";
import { groupFormEdits } from "./group-form-edits";
import { validateGroupForm } from "./group-patch";
import type { FieldErrors } from "./issue-paths";
import { useSourceCatalogues, useWorkflowDetail } from "./use-group-sources";
import { stepField, validateSteps } from "./waterfall-form";

export type GroupFormState = ReturnType<typeof useGroupForm>;

/** The checks made before saving: the group's, and a waterfall's steps'. */
function formChecks(
  table: TableView,
  current: GroupForm,
  group: Group | undefined,
  source: ReturnType<typeof chosenSource>,
  catalogues: ReturnType<typeof useSourceCatalogues>,
): FieldErrors {
  const { enrichments } = catalogues;
  return {
    ...validateGroupForm(table, current, {
      ...(group ? { editingId: group.id } : {}),
      inputs: source.sourceInputs,
      outputIds: source.outputIds,
      blockIds: source.workflow ? source.blocks.map((b) => b.id) : null,
    }),
    ...(current.kind === "waterfall"
      ? validateSteps(current, enrichments.state === "ready" ? enrichments.value : null)
      : {}),
  };
}

/** The fields the form shows (where the API's issues can land), a waterfall's steps' too. */
function formFields(form: GroupForm, inputs: SourceInput[]): Set<string> {
  return new Set([
    ...shownFields(inputs, form.outputs),
    ...(form.kind === "waterfall"
      ? form.steps.flatMap((s) => [stepField.source(s.key), stepField.outputs(s.key)])
      : []),
  ]);
}

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
  const catalogues = useSourceCatalogues();
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

  const source = chosenSource(form, detail, catalogues);
  const { sourceInputs } = source;
  const groupId = idTouched ? form.id : idForName(form.name, table.groups);
  const dependsOn = dependsTouched
    ? form.dependsOn
    : defaultDependsOn(form, table.columns, source.inputNames);
  const current: GroupForm = { ...form, id: groupId, dependsOn };
  const checks = formChecks(table, current, group, source, catalogues);
  const errorOf = (key: string): string | undefined =>
    serverErrors[key] ?? (attempted || (key === "id" && idTouched) ? checks[key] : undefined);
  /** Inputs listed in the form: the source's, or (not loaded) the ones already mapped. */
  const shownInputs: SourceInput[] =
    sourceInputs ?? Object.keys(form.inputs).map((name) => ({ name, required: false }));
  const edits = groupFormEdits({
    table,
    form,
    setForm,
    serverErrors,
    setServerErrors,
    setDependsTouched,
    dependsOn,
    source,
    enrichments: catalogues.enrichments,
    pickedWorkflow,
  });

  return {
    form,
    setIdTouched,
    dependsTouched,
    attempted,
    setAttempted,
    setServerErrors,
    ...catalogues,
    ...source,
    groupId,
    dependsOn,
    current,
    checks,
    errorOf,
    invalid: (key: string) => (errorOf(key) ? " invalid" : ""),
    owners: columnOwners(table.groups, group?.id),
    ownOutputs: new Set(form.outputs.map((r) => r.column)),
    shownInputs,
    shownFields: formFields(form, shownInputs),
    ...edits,
  };
}

/**
 * The edits the group editor's sections make to its form: a field, an output row, the
 * kind, the workflow or enrichment picked, output rows added or removed, a dependency
 * toggled or the dependencies reset, the run conditions changed. Each edit clears the API's errors for the fields
 * it touches.
 */
import type { Dispatch, RefObject, SetStateAction } from "react";
import type { EnrichmentView } from "@/contracts/enrichments";
import type { RunCondition, TableView } from "@/contracts/table";
import { type ChosenSource, newColumnName, nextOutput, takenNames } from "./chosen-source";
import { addAllEnrichmentOutputs, applyEnrichmentChoice } from "./group-choices";
import {
  type GroupForm,
  type GroupKind,
  groupField,
  type OutputRow,
  outputRow,
} from "./group-form";
import type { FieldErrors } from "./issue-paths";
import type { Loadable } from "./use-group-sources";
import { emptyStep, moved, type StepForm, stepField } from "./waterfall-form";

export interface FormEditing {
  table: TableView;
  form: GroupForm;
  setForm: Dispatch<SetStateAction<GroupForm>>;
  serverErrors: FieldErrors;
  setServerErrors: Dispatch<SetStateAction<FieldErrors>>;
  setDependsTouched(touched: boolean): void;
  /** The dependencies shown (the form's once touched, else the default). */
  dependsOn: string[];
  source: Pick<ChosenSource, "workflow" | "enrichment" | "blocks">;
  enrichments: Loadable<EnrichmentView[]>;
  /** The workflow a person just picked: its defaults apply once it has loaded. */
  pickedWorkflow: RefObject<string | null>;
}

export function groupFormEdits(f: FormEditing) {
  const { table, form, setForm, source } = f;
  const clearErrors = (...keys: string[]) => {
    if (keys.every((k) => f.serverErrors[k] === undefined)) return;
    f.setServerErrors((e) => {
      const next = { ...e };
      for (const k of keys) delete next[k];
      return next;
    });
  };
  const update = (patch: Partial<GroupForm>, ...keys: string[]) => {
    setForm((g) => ({ ...g, ...patch }));
    clearErrors(...keys);
  };
  const updateRow = (key: string, patch: Partial<OutputRow>, field: "from" | "column") => {
    setForm((g) => ({
      ...g,
      outputs: g.outputs.map((r) => (r.key === key ? { ...r, ...patch } : r)),
    }));
    clearErrors(field === "from" ? groupField.outputFrom(key) : groupField.outputColumn(key));
  };
  return {
    update,
    updateRow,
    chooseKind: (kind: GroupKind) => update({ kind }, "kind", "source"),
    chooseWorkflow: (id: string) => {
      f.pickedWorkflow.current = id === "" ? null : id;
      update({ workflowId: id }, "source");
    },
    chooseEnrichment: (id: string) => {
      const picked =
        f.enrichments.state === "ready" ? f.enrichments.value.find((e) => e.id === id) : undefined;
      setForm((g) =>
        picked ? applyEnrichmentChoice(g, picked, table.columns) : { ...g, enrichmentId: id },
      );
      clearErrors("source");
    },
    /** A name for the new column of `row` (output `from`). */
    newColumnName: (row: OutputRow, from: string): string =>
      newColumnName(
        form,
        source.workflow?.name,
        from,
        takenNames(table.columns, form.outputs, row.key),
      ),
    addOutput: () => {
      const next = nextOutput(
        form,
        source.blocks,
        source.enrichment,
        takenNames(table.columns, form.outputs),
      );
      setForm((g) => ({
        ...g,
        outputs: [...g.outputs, outputRow(next.from, next.column, next.newName)],
      }));
    },
    addAllOutputs: () => {
      const { enrichment } = source;
      if (!enrichment) return;
      setForm((g) => ({ ...g, outputs: addAllEnrichmentOutputs(g, enrichment, table.columns) }));
    },
    removeOutput: (key: string) => {
      setForm((g) => ({ ...g, outputs: g.outputs.filter((r) => r.key !== key) }));
      clearErrors(groupField.outputFrom(key), groupField.outputColumn(key), "outputs");
    },
    updateStep: (key: string, patch: Partial<StepForm>) => {
      setForm((g) => ({
        ...g,
        steps: g.steps.map((s) => (s.key === key ? { ...s, ...patch } : s)),
      }));
      clearErrors(stepField.source(key), stepField.outputs(key), "source");
    },
    addStep: () => setForm((g) => ({ ...g, steps: [...g.steps, emptyStep()] })),
    removeStep: (key: string) =>
      setForm((g) => ({ ...g, steps: g.steps.filter((s) => s.key !== key) })),
    moveStep: (key: string, by: -1 | 1) =>
      setForm((g) => ({
        ...g,
        steps: moved(
          g.steps,
          g.steps.findIndex((s) => s.key === key),
          by,
        ),
      })),
    toggleDependency: (columnId: string) => {
      f.setDependsTouched(true);
      const next = f.dependsOn.includes(columnId)
        ? f.dependsOn.filter((c) => c !== columnId)
        : [...f.dependsOn, columnId];
      update({ dependsOn: next }, "dependsOn");
    },
    resetDependencies: () => {
      f.setDependsTouched(false);
      clearErrors("dependsOn");
    },
    setRunIf: (runIf: RunCondition[]) => update({ runIf }, "runIf"),
  };
}

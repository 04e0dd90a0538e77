"use client";
/**
 * The grid's group editor: a modal to add or edit a group — one workflow or enrichment
 * that runs per row, reads mapped input columns and writes its results into output
 * columns (existing ones, or new ones created in the same save), only on the rows where
 * its run conditions hold. Saves with
 * `PATCH /api/tables/:id { columns, groups }` (full lists; an edited group keeps its
 * place) and hands the updated table to `onSaved`. Deleting a group keeps its columns.
 * The form's state is `useGroupForm`; its sections are the `Group*.tsx` components.
 */
import { type FormEvent, useId, useRef, useState } from "react";
import type { Group, TableView } from "@/contracts/table";
import { ApiError, answer, api } from "../api";
import {
  EditorModal,
  type EditorNotice,
  FieldHint,
  NoticeError,
  noticeFor,
  useRevealErrors,
} from "./editor-frame";
import { GroupAutoRun } from "./GroupAutoRun";
import { GroupDependencies } from "./GroupDependencies";
import { GroupInputs } from "./GroupInputs";
import { GroupOutputs } from "./GroupOutputs";
import { GroupRunIf } from "./GroupRunIf";
import { GroupSource } from "./GroupSource";
import { buildGroupPatch, type GroupPatch, groupIssues } from "./group-patch";
import { useGroupForm } from "./use-group-form";

export function GroupEditor(props: {
  table: TableView;
  group?: Group;
  onClose: () => void;
  onSaved: (table: TableView) => void;
}) {
  const { table, group, onClose, onSaved } = props;
  const editing = group !== undefined;
  const ids = useId();
  const state = useGroupForm(table, group);
  const {
    form,
    setIdTouched,
    attempted,
    setAttempted,
    setServerErrors,
    enrichment,
    inputNames,
    sourceLoading,
    groupId,
    current,
    checks,
    errorOf,
    invalid,
    shownFields,
    update,
  } = state;
  const [notice, setNotice] = useState<EditorNotice | null>(null);
  const [busy, setBusy] = useState<"save" | "delete" | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  const [errorTick, setErrorTick] = useState(0);
  useRevealErrors(formRef, errorTick);

  // ------------------------------------------------------------------ saving
  const send = async (kind: "save" | "delete", patch: GroupPatch): Promise<void> => {
    setBusy(kind);
    setNotice(null);
    setServerErrors({});
    try {
      const updated = await answer(
        api.PATCH("/api/tables/{id}", { params: { path: { id: table.id } }, body: patch.body }),
      );
      onSaved(updated);
    } catch (err) {
      const issues = err instanceof ApiError ? err.issues : [];
      const split =
        kind === "save"
          ? groupIssues(issues, patch, (f) => shownFields.has(f))
          : { fields: {}, rest: issues };
      setServerErrors(split.fields);
      setNotice(noticeFor(err, split.fields, split.rest, patch.body));
      setConfirmDelete(false);
      setErrorTick((t) => t + 1);
    } finally {
      setBusy(null);
    }
  };

  const save = (e: FormEvent) => {
    e.preventDefault();
    setAttempted(true);
    if (busy || sourceLoading) return;
    if (Object.keys(checks).length > 0) {
      setErrorTick((t) => t + 1);
      return;
    }
    const patch = buildGroupPatch(table, current, {
      ...(group ? { editingId: group.id } : {}),
      inputNames,
      enrichment,
    });
    void send("save", patch);
  };

  const remove = () => {
    if (!group) return;
    const groups = table.groups.filter((g) => g.id !== group.id);
    void send("delete", {
      body: { columns: table.columns, groups },
      groupIndex: -1,
      outputRows: [],
      newColumns: [],
    });
  };

  // ------------------------------------------------------------------ view
  const hasChecks = Object.keys(checks).length > 0;
  const deletedOutputs = group
    ? group.outputs
        .map((o) => table.columns.find((c) => c.id === o.columnId)?.name ?? o.columnId)
        .join(", ")
    : "";

  return (
    <EditorModal
      title={editing ? `Edit group “${group.name}”` : "Add group"}
      subtitle="A group runs a workflow or an enrichment on each row, reading the columns mapped to its inputs and writing its results into output columns."
      busy={busy !== null}
      wide
      testId="group-editor"
      onClose={onClose}
    >
      <form ref={formRef} onSubmit={save} noValidate>
        <NoticeError notice={notice} />

        <div className="editor-pair">
          <div className="field">
            <label htmlFor={`${ids}-name`}>Name</label>
            <input
              id={`${ids}-name`}
              name="name"
              className={`input${invalid("name")}`}
              value={form.name}
              maxLength={200}
              placeholder="e.g. Enrich company"
              onChange={(e) => update({ name: e.target.value }, "name")}
            />
            <FieldHint error={errorOf("name")} help="Shown above the group’s columns." />
          </div>
          <div className="field">
            <label htmlFor={`${ids}-id`}>ID</label>
            <input
              id={`${ids}-id`}
              name="id"
              className={`input editor-mono${invalid("id")}`}
              value={groupId}
              readOnly={editing}
              maxLength={63}
              spellCheck={false}
              autoComplete="off"
              placeholder="enrich_company"
              onChange={(e) => {
                setIdTouched(true);
                update({ id: e.target.value }, "id");
              }}
            />
            <FieldHint
              error={errorOf("id")}
              help={
                editing
                  ? "The id can’t change once the group exists."
                  : "Used by the API (runs, cells). Lowercase letters, digits and _; fixed once created."
              }
            />
          </div>
        </div>

        <GroupSource ids={ids} table={table} state={state} />
        <GroupInputs ids={ids} table={table} state={state} />
        <GroupOutputs ids={ids} table={table} state={state} />
        <GroupDependencies ids={ids} table={table} state={state} />
        <GroupRunIf ids={ids} table={table} state={state} />
        <GroupAutoRun table={table} group={group} state={state} />

        {confirmDelete && group && (
          <div className="editor-confirm" role="alert">
            <strong>Delete the group “{group.name}”?</strong>
            <p className="editor-help">
              It stops running on this table.{" "}
              {deletedOutputs
                ? `Its output columns (${deletedOutputs}) stay in the table with their values.`
                : ""}
            </p>
            <div className="row">
              <button
                type="button"
                className="btn btn-small btn-danger"
                onClick={remove}
                disabled={busy !== null}
              >
                {busy === "delete" ? "Deleting…" : "Delete group"}
              </button>
              <button
                type="button"
                className="btn btn-small"
                onClick={() => setConfirmDelete(false)}
                disabled={busy !== null}
              >
                Keep it
              </button>
            </div>
          </div>
        )}

        <div className="editor-footer">
          {editing && !confirmDelete && (
            <button
              type="button"
              className="btn btn-danger"
              onClick={() => setConfirmDelete(true)}
              disabled={busy !== null}
            >
              Delete…
            </button>
          )}
          {attempted && hasChecks && (
            <span className="field-error">Fix the fields marked in red.</span>
          )}
          <div className="spacer" />
          <button type="button" className="btn" onClick={onClose} disabled={busy !== null}>
            Cancel
          </button>
          <button
            type="submit"
            className="btn btn-primary"
            disabled={busy !== null || sourceLoading}
          >
            {busy === "save"
              ? "Saving…"
              : sourceLoading
                ? "Loading…"
                : editing
                  ? "Save group"
                  : "Add group"}
          </button>
        </div>
      </form>
    </EditorModal>
  );
}

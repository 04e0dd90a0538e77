"use client";
/**
 * The grid's column editor: a modal to add a column or edit one (name, type, select
 * options; the id is fixed once created), and to delete a column no group uses. Saves
 * with `PATCH /api/tables/:id { columns }` (the full list; an edited column keeps its
 * place) and hands the updated table to `onSaved`.
 */
import { type FormEvent, useId, useRef, useState } from "react";
import type { Column, ColumnType, TableView } from "@/contracts/table";
import { ApiError, answer, api } from "../api";
import {
  COLUMN_TYPE_HELP,
  COLUMN_TYPE_LABELS,
  COLUMN_TYPE_LIST,
  type ColumnField,
  type ColumnForm,
  columnFormFrom,
  columnFromForm,
  columnIssues,
  columnsWithSaved,
  columnUsage,
  describeUsage,
  parseOptions,
  validateColumnForm,
} from "./column-form";
import {
  EditorModal,
  type EditorNotice,
  FieldHint,
  NoticeError,
  noticeFor,
  useRevealErrors,
} from "./editor-frame";
import { idFromName } from "./editor-ids";
import type { FieldErrors } from "./issue-paths";

export function ColumnEditor(props: {
  table: TableView;
  column?: Column;
  onClose: () => void;
  onSaved: (table: TableView) => void;
}) {
  const { table, column, onClose, onSaved } = props;
  const editing = column !== undefined;
  const ids = useId();
  const [form, setForm] = useState<ColumnForm>(() => columnFormFrom(column));
  const [idTouched, setIdTouched] = useState(editing);
  const [attempted, setAttempted] = useState(false);
  const [serverErrors, setServerErrors] = useState<FieldErrors>({});
  const [notice, setNotice] = useState<EditorNotice | null>(null);
  const [busy, setBusy] = useState<"save" | "delete" | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  const [errorTick, setErrorTick] = useState(0);
  useRevealErrors(formRef, errorTick);

  const takenIds = table.columns.map((c) => c.id);
  const id = idTouched || form.name.trim() === "" ? form.id : idFromName(form.name, takenIds);
  const current: ColumnForm = { ...form, id };
  const checks = validateColumnForm(current, table.columns, column?.id);
  const errorOf = (field: ColumnField): string | undefined =>
    serverErrors[field] ?? (attempted || (field === "id" && idTouched) ? checks[field] : undefined);

  const uses = column ? columnUsage(table.groups, column.id) : [];
  const filledBy = column
    ? table.groups.find((g) => g.outputs.some((o) => o.columnId === column.id))
    : undefined;

  const change = (field: ColumnField, patch: Partial<ColumnForm>) => {
    setForm((f) => ({ ...f, ...patch }));
    setServerErrors((e) => {
      const { [field]: _dropped, ...others } = e;
      return others;
    });
  };

  const send = async (kind: "save" | "delete", columns: Column[], index: number): Promise<void> => {
    setBusy(kind);
    setNotice(null);
    setServerErrors({});
    try {
      const updated = await answer(
        api.PATCH("/api/tables/{id}", { params: { path: { id: table.id } }, body: { columns } }),
      );
      onSaved(updated);
    } catch (err) {
      const issues = err instanceof ApiError ? err.issues : [];
      const split = columnIssues(issues, index);
      setServerErrors(kind === "save" ? split.fields : {});
      const rest = kind === "save" ? split.rest : issues;
      setNotice(noticeFor(err, kind === "save" ? split.fields : {}, rest, { columns }));
      setConfirmDelete(false);
      setErrorTick((t) => t + 1);
    } finally {
      setBusy(null);
    }
  };

  const save = (e: FormEvent) => {
    e.preventDefault();
    setAttempted(true);
    if (busy) return;
    if (Object.keys(checks).length > 0) {
      setErrorTick((t) => t + 1);
      return;
    }
    const next = columnsWithSaved(table.columns, columnFromForm(current), column?.id);
    void send("save", next.columns, next.index);
  };

  const remove = () => {
    if (!column || uses.length > 0) return;
    void send(
      "delete",
      table.columns.filter((c) => c.id !== column.id),
      -1,
    );
  };

  const optionCount = parseOptions(form.options).length;
  const title = editing ? `Edit column “${column.name}”` : "Add column";

  return (
    <EditorModal
      title={title}
      subtitle={
        editing
          ? "Rename the column or change its type. Its id stays the same."
          : "A column holds one value per row: typed in, imported, or filled by a group."
      }
      busy={busy !== null}
      testId="column-editor"
      onClose={onClose}
    >
      <form ref={formRef} onSubmit={save} noValidate>
        <NoticeError notice={notice} />
        {filledBy && (
          <div className="notice editor-info">
            Filled by the group <strong>{filledBy.name}</strong>
            <span className={`kind ${filledBy.kind}`}>{filledBy.kind}</span>
          </div>
        )}

        <div className="editor-pair">
          <div className="field">
            <label htmlFor={`${ids}-name`}>Name</label>
            <input
              id={`${ids}-name`}
              name="name"
              className={`input${errorOf("name") ? " invalid" : ""}`}
              value={form.name}
              maxLength={200}
              placeholder="e.g. Company size"
              onChange={(e) => change("name", { name: e.target.value })}
            />
            <FieldHint error={errorOf("name")} help="Shown in the column header." />
          </div>
          <div className="field">
            <label htmlFor={`${ids}-id`}>ID</label>
            <input
              id={`${ids}-id`}
              name="id"
              className={`input editor-mono${errorOf("id") ? " invalid" : ""}`}
              value={id}
              readOnly={editing}
              maxLength={63}
              spellCheck={false}
              autoComplete="off"
              placeholder="company_size"
              onChange={(e) => {
                setIdTouched(true);
                change("id", { id: e.target.value });
              }}
            />
            <FieldHint
              error={errorOf("id")}
              help={
                editing ? (
                  "The id can’t change once the column exists."
                ) : (
                  <>
                    Used by the API and in expressions (<code>row.{id || "id"}</code>). Lowercase
                    letters, digits and _; fixed once created.
                  </>
                )
              }
            />
          </div>
        </div>

        <div className="field">
          <label htmlFor={`${ids}-type`}>Type</label>
          <select
            id={`${ids}-type`}
            name="type"
            className={`input${errorOf("type") ? " invalid" : ""}`}
            value={form.type}
            onChange={(e) => change("type", { type: e.target.value as ColumnType })}
          >
            {COLUMN_TYPE_LIST.map((t) => (
              <option key={t} value={t}>
                {COLUMN_TYPE_LABELS[t]}
              </option>
            ))}
          </select>
          <FieldHint
            error={errorOf("type")}
            help={
              editing && column.type !== form.type
                ? `${COLUMN_TYPE_HELP[form.type]} Values already in the column are kept as they are; new values must be of the new type.`
                : COLUMN_TYPE_HELP[form.type]
            }
          />
        </div>

        {form.type === "select" && (
          <div className="field">
            <label htmlFor={`${ids}-options`}>Options</label>
            <textarea
              id={`${ids}-options`}
              name="options"
              className={`input${errorOf("options") ? " invalid" : ""}`}
              rows={6}
              value={form.options}
              placeholder={"Lead\nQualified\nCustomer"}
              onChange={(e) => change("options", { options: e.target.value })}
            />
            <FieldHint
              error={errorOf("options")}
              help={`One option per line; blank lines and repeats are ignored. ${optionCount} option${optionCount === 1 ? "" : "s"}.`}
            />
          </div>
        )}

        {confirmDelete && column && (
          <div className="editor-confirm" role="alert">
            {uses.length > 0 ? (
              <>
                <strong>“{column.name}” can’t be deleted while a group uses it.</strong>
                <ul className="editor-issues">
                  {describeUsage(uses).map((line) => (
                    <li key={line}>{line}</li>
                  ))}
                </ul>
                <p className="editor-help">
                  Edit {uses.length === 1 ? "that group" : "those groups"} first: unmap the column,
                  untick it as a dependency, or point the output elsewhere.
                </p>
                <div className="row">
                  <button
                    type="button"
                    className="btn btn-small"
                    onClick={() => setConfirmDelete(false)}
                  >
                    OK
                  </button>
                </div>
              </>
            ) : (
              <>
                <strong>Delete the column “{column.name}”?</strong>
                <p className="editor-help">
                  It disappears from the table for everyone, with the values shown in it.
                </p>
                <div className="row">
                  <button
                    type="button"
                    className="btn btn-small btn-danger"
                    onClick={remove}
                    disabled={busy !== null}
                  >
                    {busy === "delete" ? "Deleting…" : "Delete column"}
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
              </>
            )}
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
          {attempted && Object.keys(checks).length > 0 && (
            <span className="field-error">Fix the fields marked in red.</span>
          )}
          <div className="spacer" />
          <button type="button" className="btn" onClick={onClose} disabled={busy !== null}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy !== null}>
            {busy === "save" ? "Saving…" : editing ? "Save column" : "Add column"}
          </button>
        </div>
      </form>
    </EditorModal>
  );
}

"use client";
/**
 * The grid's column editor: a modal to add a column or edit one (name, type, select
 * options; the id is fixed once created), and to delete a column no group uses. Saves
 * with `PATCH /api/tables/:id { columns }` (the full list; an edited column keeps its
 * place) and hands the updated table to `onSaved`.
 */
import {
  type FormEvent,
  type ReactNode,
  type RefObject,
  useEffect,
  useId,
  useRef,
  useState,
} from "react";
import type { Column, ColumnType, TableView } from "../../contracts/table";
import { ApiError, api, describeError } from "../api";
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
  type FieldErrors,
  idFromName,
  issuePlace,
  parseOptions,
  validateColumnForm,
} from "./editor-logic";

// ---------------------------------------------------------------------------------------
// Pieces shared with the group editor

/** A failure to show at the top of an editor: the API's message and unplaced issues. */
export interface EditorNotice {
  message: string;
  details: string[];
}

/**
 * The notice for a failed save: issues the form placed on fields are left out; when
 * they were all placed, there is no notice (the fields say it).
 */
export function noticeFor(
  err: unknown,
  placed: FieldErrors,
  rest: readonly { path: string; message: string }[],
  body: Parameters<typeof issuePlace>[1],
): EditorNotice | null {
  if (!(err instanceof ApiError)) return { message: describeError(err), details: [] };
  if (err.issues.length === 0) return { message: err.message, details: [] };
  if (rest.length === 0 && Object.keys(placed).length > 0) return null;
  return {
    message: err.message,
    details: rest.map((i) => (i.path ? `${issuePlace(i.path, body)}: ${i.message}` : i.message)),
  };
}

export function NoticeError({ notice }: { notice: EditorNotice | null }) {
  if (!notice) return null;
  return (
    <div className="notice notice-error" role="alert">
      <strong>{notice.message}</strong>
      {notice.details.length > 0 && (
        <ul className="editor-issues">
          {notice.details.map((d) => (
            <li key={d}>{d}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * Brings the first error inside `root` into view each time `tick` moves (a save that
 * failed, on the client or the server): a long form may be scrolled past it.
 */
export function useRevealErrors(root: RefObject<HTMLElement | null>, tick: number): void {
  useEffect(() => {
    if (tick === 0) return;
    root.current
      ?.querySelector<HTMLElement>("[role=alert], .invalid, .field-error")
      ?.scrollIntoView({ block: "center", behavior: "smooth" });
  }, [root, tick]);
}

/** A field's error, or its help text when there is none. */
export function FieldHint({ error, help }: { error?: string | undefined; help?: ReactNode }) {
  if (error) return <div className="field-error">{error}</div>;
  if (help) return <div className="editor-help">{help}</div>;
  return null;
}

/** The modal frame: a titled dialog over the page; Escape closes it unless `busy`. */
export function EditorModal(props: {
  title: ReactNode;
  subtitle?: ReactNode;
  busy?: boolean;
  wide?: boolean;
  /** `data-testid` of the dialog. */
  testId?: string;
  onClose: () => void;
  children: ReactNode;
}) {
  const { busy = false, onClose } = props;
  const titleId = useId();
  const dialog = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && !busy) onClose();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [busy, onClose]);
  useEffect(() => {
    // Start in the first field, as a form dialog should.
    dialog.current?.querySelector<HTMLElement>("input:not([readonly]), select, textarea")?.focus();
  }, []);
  return (
    <div className="modal-backdrop">
      <div
        ref={dialog}
        className={`modal editor-modal${props.wide ? " editor-modal-wide" : ""}`}
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        data-testid={props.testId}
      >
        <div className="editor-head">
          <h2 id={titleId}>{props.title}</h2>
          <button
            type="button"
            className="btn btn-ghost btn-small"
            aria-label="Close"
            onClick={onClose}
            disabled={busy}
          >
            ✕
          </button>
        </div>
        {props.subtitle && <p className="muted editor-sub">{props.subtitle}</p>}
        {props.children}
      </div>
    </div>
  );
}

// ---------------------------------------------------------------------------------------
// The column editor

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
      const updated = await api<TableView>("PATCH", `/api/tables/${encodeURIComponent(table.id)}`, {
        columns,
      });
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

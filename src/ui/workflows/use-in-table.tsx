"use client";
/**
 * "Use in a table…": adds this workflow to a table as a group, from the editor. The
 * dialog maps each workflow input to a column, each chosen result to a new or free
 * column, names the group and picks the version it runs, then sends the table's full
 * column and group lists with the additions (`PATCH /api/tables/:id`, which replaces the
 * lists it is given). The API's refusal is shown in the dialog; success links to the table.
 */
import { type ReactNode, useCallback, useEffect, useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import { ApiError, answer, api, describeError, type Issue } from "../api";
import { EditorModal, FieldHint } from "../grid/editor-frame";
import { TableOptions } from "./table-options";
import { blocksOf } from "./try-request";
import { UseInTableOutputs } from "./use-in-table-outputs";
import {
  buildUseInTablePatch,
  declaredInputs,
  defaultForm,
  type FormErrors,
  freeColumns,
  type UseInTableForm,
  validateForm,
} from "./use-in-table-plan";

export interface UseInTableProps {
  workflowId: string;
  workflowName: string;
  definition: unknown | null;
}

export function UseInTable(props: UseInTableProps): ReactNode {
  const [open, setOpen] = useState(false);
  const close = useCallback(() => setOpen(false), []);
  return (
    <>
      <button
        type="button"
        className="btn"
        data-testid="use-in-table-open"
        onClick={() => setOpen(true)}
      >
        Use in a table…
      </button>
      {open && <UseInTableDialog {...props} onClose={close} />}
    </>
  );
}

type Table = Schemas["TableView"];
type Workflow = Schemas["WorkflowView"];

function UseInTableDialog(props: UseInTableProps & { onClose: () => void }) {
  const { workflowId, workflowName, onClose } = props;
  const [tables, setTables] = useState<Table[] | null>(null);
  const [workflow, setWorkflow] = useState<Workflow | null>(null);
  /** The deployed version's definition: what a group on "deployed" runs (null: none). */
  const [deployedDefinition, setDeployedDefinition] = useState<unknown | null>(null);
  const [tableId, setTableId] = useState("");
  const [table, setTable] = useState<Table | null>(null);
  const [form, setForm] = useState<UseInTableForm | null>(null);
  const [errors, setErrors] = useState<FormErrors>({});
  const [refusal, setRefusal] = useState<{ message: string; issues: Issue[] } | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<{ tableId: string; tableName: string } | null>(null);

  useEffect(() => {
    let live = true;
    Promise.all([
      answer(api.GET("/api/tables")),
      answer(api.GET("/api/workflows/{id}", { params: { path: { id: workflowId } } })),
    ])
      .then(async ([list, wf]) => {
        const n = wf.deployedVersion;
        const frozen =
          n === null
            ? null
            : await answer(
                api.GET("/api/workflows/{id}/versions/{version}", {
                  params: { path: { id: workflowId, version: String(n) } },
                }),
              );
        if (!live) return;
        setTables(list.tables);
        setDeployedDefinition(frozen?.definition ?? null);
        setWorkflow(wf);
      })
      .catch((err: unknown) => {
        if (live) setRefusal({ message: describeError(err), issues: [] });
      });
    return () => {
      live = false;
    };
  }, [workflowId]);

  const deployed = workflow?.deployedVersion != null;
  // What the group will run, so its inputs and outputs are mapped from that: the deployed
  // version for a group on "deployed"; else the definition on screen (unsaved included),
  // or the saved one while the JSON is broken.
  const onDeployed = form ? form.version === "deployed" : deployed;
  const definition: unknown =
    onDeployed && deployedDefinition !== null
      ? deployedDefinition
      : (props.definition ?? workflow?.definition ?? null);

  useEffect(() => {
    setTable(null);
    setForm(null);
    setErrors({});
    setRefusal(null);
    if (tableId === "") return;
    let live = true;
    answer(api.GET("/api/tables/{id}", { params: { path: { id: tableId } } }))
      .then((t) => {
        if (live) setTable(t);
      })
      .catch((err: unknown) => {
        if (live) setRefusal({ message: describeError(err), issues: [] });
      });
    return () => {
      live = false;
    };
  }, [tableId]);

  // The form opens with its defaults once the table and the workflow are known.
  useEffect(() => {
    if (table && workflow && form === null)
      setForm(defaultForm({ definition, workflowName, deployed, table }));
  }, [table, workflow, form, definition, workflowName, deployed]);

  const submit = async () => {
    if (!table || !form) return;
    const found = validateForm(form, table, definition);
    setErrors(found);
    setRefusal(null);
    if (Object.keys(found).length > 0) return;
    setBusy(true);
    try {
      const patch = buildUseInTablePatch(table, form, { id: workflowId, definition });
      await answer(
        api.PATCH("/api/tables/{id}", { params: { path: { id: table.id } }, body: patch.body }),
      );
      setDone({ tableId: table.id, tableName: table.name });
    } catch (err) {
      setRefusal(
        err instanceof ApiError
          ? { message: err.message, issues: err.issues }
          : { message: describeError(err), issues: [] },
      );
    } finally {
      setBusy(false);
    }
  };

  const inputs = declaredInputs(definition);
  const blockIds = blocksOf(definition).flatMap((b) => (typeof b.id === "string" ? [b.id] : []));

  return (
    <EditorModal
      title="Use in a table"
      subtitle={`Adds “${workflowName}” to a table as a group: its inputs read columns, its results fill columns.`}
      busy={busy}
      wide
      testId="use-in-table-dialog"
      onClose={onClose}
    >
      {done ? (
        <div className="notice notice-ok" role="status" data-testid="use-in-table-done">
          Added to “{done.tableName}”.{" "}
          <a href={`/tables/${encodeURIComponent(done.tableId)}`}>Open the table</a>
        </div>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <div className="field">
            <label htmlFor="use-in-table-table">Table</label>
            <select
              id="use-in-table-table"
              className="input"
              data-testid="use-in-table-table"
              value={tableId}
              onChange={(e) => setTableId(e.target.value)}
            >
              <TableOptions tables={tables} />
            </select>
          </div>

          {table && form && (
            <>
              <div className="field">
                <label htmlFor="use-in-table-name">Group name</label>
                <input
                  id="use-in-table-name"
                  className={`input${errors.groupName ? " invalid" : ""}`}
                  data-testid="use-in-table-name"
                  value={form.groupName}
                  onChange={(e) => setForm({ ...form, groupName: e.target.value })}
                />
                <FieldHint error={errors.groupName} />
              </div>

              <div className="editor-section">
                <h3>Inputs</h3>
                {inputs.length === 0 ? (
                  <p className="muted">The workflow declares no inputs.</p>
                ) : (
                  <div className="editor-map">
                    {inputs.map((input) => (
                      <div key={input.name} className="editor-map-row">
                        <label
                          htmlFor={`use-in-table-input-${input.name}`}
                          className="editor-map-name"
                        >
                          <code>{input.name}</code>
                          {input.required && <span className="editor-req">*</span>}
                        </label>
                        <span className="editor-arrow">←</span>
                        <div>
                          <select
                            id={`use-in-table-input-${input.name}`}
                            className={`input editor-grow${errors[`input:${input.name}`] ? " invalid" : ""}`}
                            data-testid={`use-in-table-input-${input.name}`}
                            value={form.inputs[input.name] ?? ""}
                            onChange={(e) =>
                              setForm({
                                ...form,
                                inputs: { ...form.inputs, [input.name]: e.target.value },
                              })
                            }
                          >
                            <option value="">Not mapped</option>
                            {table.columns.map((c) => (
                              <option key={c.id} value={c.id}>
                                {c.name}
                              </option>
                            ))}
                          </select>
                          <FieldHint error={errors[`input:${input.name}`]} />
                        </div>
                      </div>
                    ))}
                  </div>
                )}
              </div>

              <div className="editor-section">
                <h3>Outputs</h3>
                <UseInTableOutputs
                  rows={form.outputs}
                  columns={freeColumns(table)}
                  blockIds={blockIds}
                  errors={errors}
                  onChange={(outputs) => setForm({ ...form, outputs })}
                />
              </div>

              <div className="editor-section">
                <div className="field">
                  <label htmlFor="use-in-table-version">Version the group runs</label>
                  <select
                    id="use-in-table-version"
                    className="input"
                    data-testid="use-in-table-version"
                    value={form.version}
                    onChange={(e) =>
                      setForm({ ...form, version: e.target.value as UseInTableForm["version"] })
                    }
                  >
                    <option value="deployed" disabled={!deployed}>
                      Deployed{deployed ? ` (v${workflow?.deployedVersion})` : " (none yet)"}
                    </option>
                    <option value="live">Live (the saved draft)</option>
                  </select>
                  <span className="muted" data-testid="use-in-table-mapped-from">
                    Inputs and results are those of{" "}
                    {form.version === "deployed" && deployedDefinition !== null
                      ? `the deployed version (v${workflow?.deployedVersion})`
                      : "the draft on screen"}
                    .
                  </span>
                </div>
                <label className="editor-check editor-toggle">
                  <input
                    type="checkbox"
                    data-testid="use-in-table-autorun"
                    checked={form.autoRun}
                    onChange={(e) => setForm({ ...form, autoRun: e.target.checked })}
                  />
                  Run by itself on rows whose inputs are filled (auto-run)
                </label>
              </div>
            </>
          )}

          {refusal && (
            <div className="notice notice-error" role="alert" data-testid="use-in-table-refused">
              <strong>{refusal.message}</strong>
              {refusal.issues.length > 0 && (
                <ul className="editor-issues">
                  {refusal.issues.map((i) => (
                    <li key={`${i.path}\u0000${i.message}`}>
                      {i.path ? <code>{i.path}</code> : null} {i.message}
                    </li>
                  ))}
                </ul>
              )}
            </div>
          )}

          <div className="editor-footer">
            {Object.keys(errors).length > 0 && (
              <span className="field-error">Fix the fields marked in red.</span>
            )}
            <div className="spacer" />
            <button type="button" className="btn" onClick={onClose} disabled={busy}>
              Cancel
            </button>
            <button
              type="submit"
              className="btn btn-primary"
              data-testid="use-in-table-submit"
              disabled={busy || !table || !form}
            >
              {busy ? "Adding…" : "Add the group"}
            </button>
          </div>
        </form>
      )}
    </EditorModal>
  );
}

"use client";
/**
 * "Try it" on a row: the table, one of its groups that run this workflow (its input
 * mapping feeds the run), and the row (one of the first rows, or an id typed in). The
 * lists load from the API as the choices are made.
 */
import { useEffect, useRef, useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import { answer, api, describeError } from "../api";
import { TableOptions } from "./table-options";
import { groupsOfWorkflow, rowLabel } from "./try-request";

/** The rows offered in the select; any other row is reached by its id. */
const ROWS_SHOWN = 50;

export interface RowChoice {
  tableId: string;
  groupId: string;
  rowId: string;
}

type Table = Schemas["TableView"];
type Row = Schemas["RowView"];

export function TryRowPicker(props: {
  workflowId: string;
  choice: RowChoice;
  onChange: (next: RowChoice) => void;
  /** Switches the panel to trying on typed inputs (no group runs this workflow). */
  onUseInputs: () => void;
}) {
  const { workflowId, choice, onChange } = props;
  const [tables, setTables] = useState<Table[] | null>(null);
  const [table, setTable] = useState<Table | null>(null);
  const [rows, setRows] = useState<Row[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const changeRef = useRef(onChange);
  changeRef.current = onChange;

  useEffect(() => {
    let live = true;
    answer(api.GET("/api/tables"))
      .then((r) => {
        if (live) setTables(r.tables);
      })
      .catch((err: unknown) => {
        if (live) setError(describeError(err));
      });
    return () => {
      live = false;
    };
  }, []);

  const { tableId } = choice;
  useEffect(() => {
    setTable(null);
    setRows(null);
    if (tableId === "") return;
    let live = true;
    const path = { path: { id: tableId } };
    Promise.all([
      answer(api.GET("/api/tables/{id}", { params: path })),
      answer(
        api.GET("/api/tables/{id}/rows", { params: { ...path, query: { limit: ROWS_SHOWN } } }),
      ),
    ])
      .then(([t, page]) => {
        if (!live) return;
        setTable(t);
        setRows(page.rows);
        // The first group and the first row are chosen for the person.
        const groupId = groupsOfWorkflow(t.groups, workflowId)[0]?.id ?? "";
        changeRef.current({ tableId, groupId, rowId: page.rows[0]?.id ?? "" });
      })
      .catch((err: unknown) => {
        if (live) setError(describeError(err));
      });
    return () => {
      live = false;
    };
  }, [tableId, workflowId]);

  const groups = table ? groupsOfWorkflow(table.groups, workflowId) : [];

  return (
    <div className="try-row-picker">
      {error && (
        <div className="notice notice-error" role="alert">
          {error}
        </div>
      )}
      <div className="field">
        <label htmlFor="try-table">Table</label>
        <select
          id="try-table"
          className="input"
          data-testid="try-table"
          value={choice.tableId}
          onChange={(e) => onChange({ tableId: e.target.value, groupId: "", rowId: "" })}
        >
          <TableOptions tables={tables} />
        </select>
      </div>

      {table && groups.length === 0 && (
        <div className="notice notice-warn" data-testid="try-no-group">
          No group of “{table.name}” runs this workflow.{" "}
          <button type="button" className="linklike" onClick={props.onUseInputs}>
            Try it on inputs instead
          </button>
          , or add it to the table with “Use in a table…”.
        </div>
      )}

      {table && groups.length > 0 && (
        <>
          <div className="field">
            <label htmlFor="try-group">Group (its input mapping feeds the run)</label>
            <select
              id="try-group"
              className="input"
              data-testid="try-group"
              value={choice.groupId}
              onChange={(e) => onChange({ ...choice, groupId: e.target.value })}
            >
              {groups.map((g) => (
                <option key={g.id} value={g.id}>
                  {g.name}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="try-row">Row</label>
            <select
              id="try-row"
              className="input"
              data-testid="try-row"
              value={rows?.some((r) => r.id === choice.rowId) ? choice.rowId : ""}
              onChange={(e) => onChange({ ...choice, rowId: e.target.value })}
            >
              <option value="">
                {rows?.length === 0 ? "The table has no rows" : "Another row (its id below)"}
              </option>
              {rows?.map((r) => (
                <option key={r.id} value={r.id}>
                  {rowLabel(r, table.columns)}
                </option>
              ))}
            </select>
            <input
              className="input"
              aria-label="Row id"
              placeholder="Row id"
              data-testid="try-row-id"
              value={choice.rowId}
              onChange={(e) => onChange({ ...choice, rowId: e.target.value.trim() })}
            />
          </div>
        </>
      )}
    </div>
  );
}

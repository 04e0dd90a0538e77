"use client";
/**
 * One table: the toolbar (add, run, stop, export), the run progress lines, the usage
 * limit notice, the filter bar, the live grid, and the editors and dialogs it opens.
 */
import { useMemo, useState } from "react";
import type { Schemas } from "../../client/cellflow-client";
import type { Column, Group, TableView } from "../../contracts/table";
import { answer, api, describeError } from "../api";
import { csvExportUrl } from "../api-raw";
import { Shell } from "../shell";
import { CellDetailsDialog } from "./CellDetails";
import { ColumnEditor } from "./ColumnEditor";
import { ApproveDialog, FirstNDialog } from "./Dialogs";
import { FilterBar } from "./FilterBar";
import { Grid, type GridActions } from "./Grid";
import { GroupEditor } from "./GroupEditor";
import type { RowView } from "./model";
import { needsConfirmation, RunDialog } from "./RunDialog";
import { RunMatchingDialog } from "./RunMatchingDialog";
import { RunProgress } from "./RunProgress";
import { NO_QUERY, nextSort, type RowQuery } from "./row-query";
import { useLiveTable } from "./use-table";

type RunRequest = Omit<Schemas["CreateRunRequest"], "dryRun">;

type Open =
  | { kind: "column"; column?: Column }
  | { kind: "group"; group?: Group }
  | { kind: "approve"; row: RowView; group: Group }
  | { kind: "details"; row: RowView; group: Group }
  | { kind: "firstN"; group: Group | null }
  | { kind: "confirmRun"; req: RunRequest; estimate: Schemas["RunEstimate"] }
  | { kind: "matching"; group: Group | null }
  | null;

export function GridPage({ tableId }: { tableId: string }) {
  const [query, setQuery] = useState<RowQuery>(NO_QUERY);
  const live = useLiveTable(tableId, query);
  const { table, rows, version } = live;
  // Cached by `rows` until the next change; `version` re-renders this page when it moves.
  const list = rows.list();
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [open, setOpen] = useState<Open>(null);
  const [menu, setMenu] = useState<{ group: Group | null; x: number; y: number } | null>(null);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const groupNames = useMemo(
    () => new Map((table?.groups ?? []).map((g) => [g.id, g.name])),
    [table],
  );

  const fail = (err: unknown) => setMessage({ text: describeError(err), error: true });
  const tablePath = { params: { path: { id: tableId } } };
  const rowPath = (rowId: string) => ({ params: { path: { id: tableId, rowId } } });

  /** `confirmed`: start without the dry run (a row's own ▶, or the Run dialog's answer). */
  const run = async (req: RunRequest, confirmed = false) => {
    setMenu(null);
    setOpen(null);
    try {
      if (!confirmed) {
        const dry = await answer(
          api.POST("/api/tables/{id}/runs", { ...tablePath, body: { ...req, dryRun: true } }),
        );
        if ("estimate" in dry && needsConfirmation(dry)) {
          setOpen({ kind: "confirmRun", req, estimate: dry });
          return;
        }
      }
      const r = await answer(api.POST("/api/tables/{id}/runs", { ...tablePath, body: req }));
      setMessage(
        "stamped" in r && r.stamped === 0
          ? { text: "Nothing to run: every cell in scope already ran.", error: false }
          : null,
      );
      live.refreshRuns();
    } catch (err) {
      fail(err);
    }
  };

  const stop = async (scope: Pick<Schemas["CancelRunsRequest"], "rowIds" | "groupIds">) => {
    setMenu(null);
    try {
      const r = await answer(
        api.POST("/api/tables/{id}/runs/cancel", { ...tablePath, body: scope }),
      );
      setMessage({ text: `Stopped ${r.cancelled.toLocaleString()} cells.`, error: false });
      live.refreshRuns();
    } catch (err) {
      fail(err);
    }
  };

  const actions: GridActions = {
    async saveValue(row, column, value) {
      try {
        const saved = await answer(
          api.PATCH("/api/tables/{id}/rows/{rowId}", {
            ...rowPath(row.id),
            body: { data: { [column.id]: value } },
          }),
        );
        live.rows.upsert([saved]);
        return null;
      } catch (err) {
        return describeError(err);
      }
    },
    runRow: (row) => void run({ mode: "all", rowIds: [row.id] }, true),
    stopRow: (row) => void stop({ rowIds: [row.id] }),
    deleteRow: (row) =>
      void answer(api.DELETE("/api/tables/{id}/rows/{rowId}", rowPath(row.id))).then(() => {
        live.rows.remove([row.id]);
      }, fail),
    approve: (row, group) => setOpen({ kind: "approve", row, group }),
    details: (row, group) => setOpen({ kind: "details", row, group }),
    editColumn: (column) => setOpen({ kind: "column", column }),
    editGroup: (group) => setOpen({ kind: "group", group }),
    groupMenu: (group, anchor) => {
      const r = anchor.getBoundingClientRect();
      setMenu({ group, x: r.left, y: r.bottom + 4 });
    },
  };

  const addRow = async () => {
    try {
      await answer(
        api.POST("/api/tables/{id}/rows", { ...tablePath, body: { rows: [{ data: {} }] } }),
      );
    } catch (err) {
      fail(err);
    }
  };

  const deleteSelected = async () => {
    const ids = [...selected];
    if (!window.confirm(`Delete ${ids.length} rows? Their running cells stop.`)) return;
    try {
      for (const id of ids) await answer(api.DELETE("/api/tables/{id}/rows/{rowId}", rowPath(id)));
      live.rows.remove(ids);
      setSelected(new Set());
    } catch (err) {
      fail(err);
    }
  };

  const saved = (t: TableView) => {
    live.setTable(t);
    setOpen(null);
  };

  if (live.error && !table) {
    return (
      <Shell>
        <div className="notice notice-error">{live.error}</div>
        <a href="/tables">Back to tables</a>
      </Shell>
    );
  }

  const menuGroups = menu?.group ? [menu.group.id] : undefined;
  const inFlight = list.some((r) =>
    Object.values(r.cells).some((c) => c.status === "queued" || c.status === "running"),
  );

  return (
    <Shell wide>
      <div className="grid-toolbar">
        <h1 data-testid="table-name">{table?.name ?? "…"}</h1>
        <span className={`live ${live.stream}`} data-testid="stream-state" data-state={live.stream}>
          <span className="dot" />
          {live.stream === "live"
            ? "Live"
            : live.stream === "connecting"
              ? "Connecting…"
              : "Reconnecting…"}
        </span>
        {!live.loaded.done && (
          <span className="muted">Loading rows… {live.loaded.rows.toLocaleString()}</span>
        )}
        <div className="spacer" />
        <button type="button" className="btn" onClick={() => void addRow()}>
          + Row
        </button>
        <button type="button" className="btn" onClick={() => setOpen({ kind: "column" })}>
          + Column
        </button>
        <button
          type="button"
          className="btn"
          data-testid="add-group"
          onClick={() => setOpen({ kind: "group" })}
        >
          + Group
        </button>
        {selected.size > 0 && (
          <>
            <button
              type="button"
              className="btn"
              onClick={() => void run({ mode: "all", rowIds: [...selected] })}
            >
              Run {selected.size} selected
            </button>
            <button type="button" className="btn btn-danger" onClick={() => void deleteSelected()}>
              Delete {selected.size}
            </button>
          </>
        )}
        <button
          type="button"
          className="btn btn-primary"
          data-testid="run-all-menu"
          disabled={(table?.groups.length ?? 0) === 0}
          onClick={(e) => {
            const r = e.currentTarget.getBoundingClientRect();
            setMenu({ group: null, x: r.left, y: r.bottom + 4 });
          }}
        >
          Run ▾
        </button>
        <button
          type="button"
          className="btn btn-danger"
          data-testid="stop-all"
          disabled={!inFlight && !live.runs.some((r) => r.status === "active")}
          onClick={() => void stop({})}
        >
          Stop all
        </button>
        <a className="btn" href={csvExportUrl(tableId)} download>
          Export CSV
        </a>
      </div>
      {live.limitNotice && (
        <div className="notice notice-warn row" data-testid="limit-notice">
          <span>{live.limitNotice}</span>
          <div className="spacer" />
          <button type="button" className="btn btn-small" onClick={live.dismissLimit}>
            Dismiss
          </button>
        </div>
      )}
      {message && (
        <div className={`notice row ${message.error ? "notice-error" : ""}`}>
          <span>{message.text}</span>
          <div className="spacer" />
          <button type="button" className="btn btn-small" onClick={() => setMessage(null)}>
            Dismiss
          </button>
        </div>
      )}
      <RunProgress runs={live.runs} groupNames={groupNames} />
      {table && (
        <FilterBar
          table={table}
          query={query}
          matching={live.loaded}
          error={live.rowsError}
          onChange={setQuery}
          onRunFailed={(where) => void run({ mode: "failed", where })}
        />
      )}
      {table && (
        <Grid
          table={table}
          rows={list}
          version={version}
          selected={selected}
          onSelect={setSelected}
          actions={actions}
          sort={{
            current: query.sort,
            onSort: (columnId) => setQuery({ ...query, sort: nextSort(query.sort, columnId) }),
          }}
        />
      )}
      {menu && (
        <>
          {/* biome-ignore lint/a11y/noStaticElementInteractions: a click outside closes the menu; its items are buttons */}
          <div
            role="presentation"
            style={{ position: "fixed", inset: 0, zIndex: 20 }}
            onMouseDown={() => setMenu(null)}
          />
          <div className="menu" style={{ left: menu.x, top: menu.y, position: "fixed" }}>
            <button type="button" onClick={() => void run({ groupIds: menuGroups, mode: "all" })}>
              Run all rows
            </button>
            <button
              type="button"
              onClick={() => void run({ groupIds: menuGroups, mode: "incomplete" })}
            >
              Run incomplete rows
            </button>
            <button type="button" onClick={() => void run({ groupIds: menuGroups, mode: "new" })}>
              Run new rows (never run)
            </button>
            <button
              type="button"
              onClick={() => void run({ groupIds: menuGroups, mode: "failed" })}
            >
              Run failed only (last attempt errored)
            </button>
            <button
              type="button"
              onClick={() => void run({ groupIds: menuGroups, mode: "failed", resume: true })}
            >
              Resume failed (skip the blocks that finished)
            </button>
            <button
              type="button"
              onClick={() => {
                setOpen({ kind: "firstN", group: menu.group });
                setMenu(null);
              }}
            >
              Run first N rows…
            </button>
            <button
              type="button"
              onClick={() => {
                setOpen({ kind: "matching", group: menu.group });
                setMenu(null);
              }}
            >
              Run matching…
            </button>
            <button
              type="button"
              disabled={selected.size === 0}
              onClick={() => void run({ groupIds: menuGroups, mode: "all", rowIds: [...selected] })}
            >
              Run selected rows ({selected.size})
            </button>
            {menu.group && (
              <button type="button" onClick={() => void stop({ groupIds: [menu.group?.id ?? ""] })}>
                Stop this group
              </button>
            )}
          </div>
        </>
      )}
      {open?.kind === "column" && table && (
        <ColumnEditor
          table={table}
          {...(open.column ? { column: open.column } : {})}
          onClose={() => setOpen(null)}
          onSaved={saved}
        />
      )}
      {open?.kind === "group" && table && (
        <GroupEditor
          table={table}
          {...(open.group ? { group: open.group } : {})}
          onClose={() => setOpen(null)}
          onSaved={saved}
        />
      )}
      {open?.kind === "approve" && (
        <ApproveDialog
          tableId={tableId}
          row={live.rows.get(open.row.id) ?? open.row}
          group={open.group}
          onClose={() => setOpen(null)}
        />
      )}
      {open?.kind === "details" && (
        <CellDetailsDialog
          tableId={tableId}
          row={live.rows.get(open.row.id) ?? open.row}
          group={open.group}
          onClose={() => setOpen(null)}
        />
      )}
      {open?.kind === "confirmRun" && (
        <RunDialog
          estimate={open.estimate}
          groupNames={groupNames}
          onClose={() => setOpen(null)}
          onRun={(maxCredits) =>
            void run({ ...open.req, ...(maxCredits ? { maxCredits } : {}) }, true)
          }
        />
      )}
      {open?.kind === "firstN" && (
        <FirstNDialog
          group={open.group}
          onClose={() => setOpen(null)}
          onRun={(n) =>
            void run({
              ...(open.group ? { groupIds: [open.group.id] } : {}),
              mode: "all",
              limit: n,
            })
          }
        />
      )}
      {open?.kind === "matching" && table && (
        <RunMatchingDialog
          table={table}
          group={open.group}
          initial={query.where}
          onClose={() => setOpen(null)}
          onRun={(req) =>
            void run({ ...(open.group ? { groupIds: [open.group.id] } : {}), ...req })
          }
        />
      )}
    </Shell>
  );
}

"use client";
/**
 * One table: the toolbar (`GridToolbar`: add, run, stop, export), the run progress lines,
 * the usage limit notice, the filter bar, the live grid, and the editors and dialogs it
 * opens.
 * The Run ▾ menu and its dialogs are `RunMenu`; starting a run (through its dry run and
 * the Run dialog) and stopping cells is `useRunControl`, for every button alike.
 * Saved views (`ViewPicker`, `saved-views.ts`) open into the filter bar and the hidden
 * columns; the open view is in the URL (`?view=`), so a link opens it. A link may also
 * name a cell (`?row=&group=`, `useLinkedCell`): its details open. The editors and
 * dialogs it opens are `GridDialogs`.
 */
import { useEffect, useMemo, useRef, useState } from "react";
import type { TableView } from "@/contracts/table";
import type { SavedView } from "@/contracts/views";
import { answer, api, describeError } from "../api";
import { Shell } from "../shell";
import { FilterBar } from "./FilterBar";
import { Grid } from "./Grid";
import { GridDialogs, type OpenDialog } from "./GridDialogs";
import { GridToolbar } from "./GridToolbar";
import type { GridActions } from "./grid-actions";
import { RunDialog } from "./RunDialog";
import { type MenuAnchor, RunMenu } from "./RunMenu";
import { RunProgress } from "./RunProgress";
import { NO_QUERY, nextSort, type RowQuery } from "./row-query";
import { SelectionBar } from "./SelectionBar";
import {
  edited,
  fittedView,
  knownHidden,
  queryOfView,
  settled,
  toggleHidden,
  urlHiddenFilled,
  urlViewFilled,
  urlViewMissing,
  urlWithView,
  VIEW_NOT_FOUND,
  viewEdited,
  viewFields,
} from "./saved-views";
import { type LinkedCell, useLinkedCell } from "./use-linked-cell";
import { type PageMessage, useRunControl } from "./use-run-control";
import { useSavedViews } from "./use-saved-views";
import { useSelection } from "./use-selection";
import { useLiveTable } from "./use-table";
import { ViewPicker } from "./ViewPicker";

export function GridPage({
  tableId,
  viewId,
  cell,
}: {
  tableId: string;
  viewId?: string;
  cell?: LinkedCell;
}) {
  // A view named by the URL is read through from the first read, before its list is in.
  const [query, setQuery] = useState<RowQuery>(viewId ? { ...NO_QUERY, view: viewId } : NO_QUERY);
  const [hidden, setHidden] = useState<string[]>([]);
  const [openViewId, setOpenViewId] = useState<string | null>(viewId ?? null);
  const live = useLiveTable(tableId, query);
  const { table, rows, version } = live;
  // Cached by `rows` until the next change; `version` re-renders this page when it moves.
  const list = rows.list();
  const [open, setOpen] = useState<OpenDialog>(null);
  const [menu, setMenu] = useState<MenuAnchor | null>(null);
  const [message, setMessage] = useState<PageMessage | null>(null);
  const groupNames = useMemo(
    () => new Map((table?.groups ?? []).map((g) => [g.id, g.name])),
    [table],
  );
  const runs = useRunControl(tableId, { changed: live.refreshRuns, message: setMessage });
  const { run, stop, confirming } = runs;
  const filtered = query.where.length > 0 || query.view !== undefined;
  const selection = useSelection({
    tableId,
    where: query.where,
    filtered,
    total: rows.total,
    live,
    run: (req) => void run(req),
    message: setMessage,
  });
  const { selected, setSelected } = selection;

  const fail = (err: unknown) => setMessage({ text: describeError(err), error: true });
  useLinkedCell(
    tableId,
    cell,
    table,
    (row, group) => setOpen({ kind: "details", row, group }),
    (text) => setMessage({ text, error: true }),
  );
  const views = useSavedViews(tableId, (text) => setMessage({ text, error: true }));
  const columns = table?.columns ?? null;
  const found = views.list?.find((v) => v.id === openViewId);
  const openView = found ? fittedView(found, columns) : null;
  /** The hidden columns the table has: a deleted one hides nothing and is not saved. */
  const shownHidden = knownHidden(hidden, columns);
  const changeQuery = (q: RowQuery) => setQuery(edited(q));

  // The URL names the open view (none: no parameter), so a link or a reload opens it.
  useEffect(() => {
    window.history.replaceState(null, "", urlWithView(window.location.href, openViewId));
  }, [openViewId]);

  const showView = (view: SavedView | null) => {
    setOpenViewId(view?.id ?? null);
    setQuery(view ? queryOfView(view) : NO_QUERY);
    setHidden(view ? fittedView(view, columns).hiddenColumns : []);
  };
  // The URL's view, once the list is read: its conditions, sort and hidden columns shown,
  // unless edited meanwhile; a view the list does not have is said and closed.
  const urlViewShown = useRef(false);
  useEffect(() => {
    if (!views.list || !viewId || urlViewShown.current) return;
    urlViewShown.current = true;
    const view = views.list.find((v) => v.id === viewId);
    if (view) {
      setQuery((q) => urlViewFilled(q, view));
      setHidden((h) => urlHiddenFilled(h, view));
    } else {
      setOpenViewId((id) => (id === viewId ? null : id));
      setQuery((q) => urlViewMissing(q, viewId));
      setMessage({ text: VIEW_NOT_FOUND, error: true });
    }
  }, [views.list, viewId]);

  /**
   * A view saved from the filter bar, once its answer is in: opened, except what changed
   * during the await (another view picked, the bar or the hidden columns edited) stays.
   */
  const showSaved = (
    view: SavedView,
    atClick: { open: string | null; query: RowQuery; hidden: string[] },
  ) => {
    setOpenViewId((id) => settled(id, atClick.open, view.id));
    setQuery((q) => settled(q, atClick.query, queryOfView(view)));
    setHidden((h) => settled(h, atClick.hidden, view.hiddenColumns));
  };

  const viewActions = {
    async save(name: string) {
      const atClick = { open: openViewId, query, hidden };
      const view = await views.create(name, viewFields(query, shownHidden));
      if (view) showSaved(view, atClick);
    },
    async update() {
      if (!openView) return;
      const atClick = { open: openViewId, query, hidden };
      const view = await views.update(openView.id, viewFields(query, shownHidden));
      if (view) showSaved(view, atClick);
    },
    async rename(name: string) {
      if (openView) await views.update(openView.id, { name });
    },
    async remove() {
      if (!openView || !window.confirm(`Delete the view “${openView.name}” for everyone?`)) return;
      const removed = openView.id;
      if (!(await views.remove(removed))) return;
      // The filter bar keeps what it shows, now as an unsaved filter.
      setOpenViewId((id) => (id === removed ? null : id));
      setQuery((q) => (q.view === removed ? edited(q) : q));
    },
  };
  /** The open view could not be read through (a column it names is gone: the 409 says which). */
  const viewFailed = query.view !== undefined && live.rowsError !== null;
  const rowPath = (rowId: string) => ({ params: { path: { id: tableId, rowId } } });

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
        live.deleted([row.id]);
      }, fail),
    approve: (row, group) => setOpen({ kind: "approve", row, group }),
    details: (row, group) => setOpen({ kind: "details", row, group }),
    editColumn: (column) => setOpen({ kind: "column", column }),
    hideColumn: (column) => setHidden((h) => toggleHidden(h, column.id)),
    editGroup: (group) => setOpen({ kind: "group", group }),
    groupMenu: (group, anchor) => {
      const r = anchor.getBoundingClientRect();
      setMenu({ group, x: r.left, y: r.bottom + 4 });
    },
  };

  const addRow = async () => {
    try {
      await answer(
        api.POST("/api/tables/{id}/rows", {
          params: { path: { id: tableId } },
          body: { rows: [{ data: {} }] },
        }),
      );
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

  const inFlight = list.some((r) =>
    Object.values(r.cells).some((c) => c.status === "queued" || c.status === "running"),
  );

  return (
    <Shell wide>
      <GridToolbar
        tableId={tableId}
        table={table}
        live={live}
        selectedCount={selection.count}
        canStop={inFlight || live.runs.some((r) => r.status === "active")}
        onAddRow={() => void addRow()}
        onAddColumn={() => setOpen({ kind: "column" })}
        onAddGroup={() => setOpen({ kind: "group" })}
        onAddAiColumn={() => setOpen({ kind: "ai-column" })}
        onRunSelected={selection.runSelected}
        onDeleteSelected={() => void selection.deleteSelected()}
        onRunMenu={setMenu}
        onStopAll={() => void stop({})}
        onSchedules={() => setOpen({ kind: "schedules" })}
        onAutoRun={({ dispatchId, ...t }) => {
          live.setTable(t);
          if (dispatchId) live.refreshRuns();
        }}
        onError={(text) => setMessage({ text, error: true })}
        views={
          <ViewPicker
            views={views.list}
            open={openView}
            edited={openView !== null && viewEdited(openView, query, shownHidden)}
            onOpen={showView}
            onSave={(name) => void viewActions.save(name)}
            onUpdate={() => void viewActions.update()}
            onRename={(name) => void viewActions.rename(name)}
            onDelete={() => void viewActions.remove()}
          />
        }
      />
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
          error={viewFailed ? null : live.rowsError}
          hidden={shownHidden}
          onChange={changeQuery}
          onShowColumn={(id) => setHidden((h) => toggleHidden(h, id))}
          onRunFailed={(where) => void run({ mode: "failed", where })}
        />
      )}
      {/* A view named by the URL offers its rows once its filter is filled in (a run or
          delete of them names that filter). */}
      {table && !viewFailed && (viewId === undefined || urlViewShown.current) && (
        <SelectionBar
          selection={selected}
          loaded={list.map((r) => r.id)}
          total={rows.total}
          filtered={filtered}
          onSelect={setSelected}
        />
      )}
      {viewFailed && (
        <div className="notice notice-error" role="alert" data-testid="view-error">
          {live.rowsError}
        </div>
      )}
      {table && !viewFailed && (
        <Grid
          table={table}
          rows={list}
          version={version}
          selected={selected}
          onSelect={setSelected}
          actions={actions}
          progress={live.progress}
          hidden={shownHidden}
          total={rows.total}
          start={rows.start}
          readId={live.readId}
          onRange={live.show}
          sort={{
            current: query.sort,
            onSort: (columnId) => changeQuery({ ...query, sort: nextSort(query.sort, columnId) }),
          }}
        />
      )}
      <RunMenu
        anchor={menu}
        table={table}
        selected={selected}
        total={rows.total}
        filter={query.where}
        onRun={(req) => void run(req)}
        onStop={(scope) => void stop(scope)}
        onClose={() => setMenu(null)}
      />
      <GridDialogs
        open={open}
        tableId={tableId}
        table={table}
        rows={list}
        selected={selected}
        current={(row) => live.rows.get(row.id) ?? row}
        onClose={() => setOpen(null)}
        onSaved={saved}
      />
      {confirming && (
        <RunDialog
          estimate={confirming.estimate}
          groupNames={groupNames}
          onClose={runs.cancelConfirm}
          onRun={(caps) => void run({ ...confirming.req, ...caps }, true)}
        />
      )}
    </Shell>
  );
}

"use client";
/**
 * Everything the grid page shows about one table, kept live: the table, its rows (a
 * window of those the filter matches, in the sort's order, around what is on screen,
 * with their count: `useRowReads`), its runs with their counts (`useTableRuns`), and the stream of events
 * that moves them (`openTableStream`), and each group's progress (`GET /progress`, then
 * every `progress` event: the server sends one at most once a second while cells change).
 * A run's stamping page or a Stop over many cells sends one `dispatch` event instead of
 * a `cell` event per cell: the rows it may have changed are read again (`bulk-refetch.ts`).
 * The stream is opened before the rows are read and its events are held until the read
 * is in, then folded in by the merge rule, so nothing that happened in between is lost
 * or applied on top of a newer state. A `reset` (the cursor fell out of retention)
 * reloads everything. Under a filter, events update the rows shown but add none (whether
 * a new row matches is the server's to say): a row that starts or stops matching after
 * an edit or a run stays as it was until the filter changes or the page reloads.
 */
import { useCallback, useEffect, useState } from "react";
import type { TableEvent } from "@/contracts/events";
import type { TableProgress } from "@/contracts/progress";
import type { TableView } from "@/contracts/table";
import { answer, api, describeError } from "../api";
import type { GridRows } from "./model";
import type { RowQuery } from "./row-query";
import { limitNotice, openTableStream, type StreamState } from "./table-stream";
import { useRowReads } from "./use-row-reads";
import type { RowRange } from "./use-row-window";
import { useTableProgress } from "./use-table-progress";
import { type RunView, useTableRuns } from "./use-table-runs";

export interface LiveTable {
  table: TableView | null;
  rows: GridRows;
  version: number;
  runs: RunView[];
  /** Each group's cells by status (null until read). */
  progress: TableProgress | null;
  /** The rows that match (the count), and whether the first page is in. */
  loaded: { rows: number; done: boolean };
  /** Moves with each new filter or sort (the grid scrolls back to the top). */
  readId: number;
  /** The rows on screen moved (indexes among all): the window reads what it lacks. */
  show(range: RowRange): void;
  /** Rows this page deleted (out of the window and the count). */
  deleted(ids: readonly string[]): void;
  /** Rows this page deleted without naming them (a bulk delete by filter): the window read again. */
  changed(): void;
  stream: StreamState;
  limitNotice: string | null;
  error: string | null;
  /** Why the rows of the current filter or sort could not be read. */
  rowsError: string | null;
  dismissLimit(): void;
  setTable(t: TableView): void;
  refreshRuns(): void;
  reload(): void;
}

export function useLiveTable(tableId: string, query: RowQuery): LiveTable {
  const reads = useRowReads(tableId, query);
  const { rows, version, loaded, rowsError, bump, loadRows, rowsEvent, bulkRefetch } = reads;
  const { runs, loadRuns, refreshRuns } = useTableRuns(tableId);
  const [table, setTable] = useState<TableView | null>(null);
  const [stream, setStream] = useState<StreamState>("connecting");
  const [limit, setLimit] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { progress, loadProgress, setProgress } = useTableProgress(tableId);

  const loadTable = useCallback(async () => {
    const t = await answer(api.GET("/api/tables/{id}", { params: { path: { id: tableId } } }));
    setTable(t);
    // With the table: a group added or removed changes the bars.
    await loadProgress();
  }, [tableId, loadProgress]);

  /** Everything, from the API; a failure is shown instead of the grid. */
  const loadAll = useCallback(async () => {
    try {
      await loadTable();
      await loadRows();
      await loadRuns();
    } catch (err) {
      setError(describeError(err));
    }
  }, [loadTable, loadRows, loadRuns]);

  const reload = useCallback(() => void loadAll(), [loadAll]);

  useEffect(() => {
    const apply = (event: TableEvent) => {
      switch (event.event) {
        case "cell":
          if (rows.applyCell(event.data)) bump();
          refreshRuns();
          break;
        case "rows":
          rowsEvent(event.data);
          break;
        case "schema":
          void loadTable().then(bump, () => undefined);
          break;
        case "progress":
          setProgress(event.data);
          break;
        case "dispatch":
          // A bulk stamp or Stop sends this instead of a `cell` event per cell.
          bulkRefetch(event.data);
          refreshRuns();
          break;
        case "limit":
          setLimit(limitNotice(event.data));
          refreshRuns();
          break;
        case "reset":
          void loadAll();
          break;
      }
    };
    const events = openTableStream(tableId, { event: apply, state: setStream });
    void (async () => {
      await loadAll();
      events.release();
    })();
    return () => events.close();
  }, [tableId, rows, bump, loadTable, setProgress, loadAll, refreshRuns, rowsEvent, bulkRefetch]);

  return {
    table,
    rows,
    version,
    runs,
    progress,
    loaded,
    readId: reads.readId,
    show: reads.show,
    deleted: reads.deleted,
    changed: () => void reads.readAgain(),
    stream,
    limitNotice: limit,
    error,
    rowsError,
    dismissLimit: () => setLimit(null),
    setTable,
    refreshRuns,
    reload,
  };
}

"use client";
/**
 * Everything the grid page shows about one table, kept live: the table, its rows (all
 * those the filter matches, in the sort's order, paged in and shown as each page comes),
 * its runs with their counts, and the stream of events that moves them.
 * The stream is opened before the rows are read and its events are held until the read
 * is in, then folded in by the merge rule, so nothing that happened in between is lost
 * or applied on top of a newer state. The browser's EventSource reconnects by itself
 * with `Last-Event-ID`; if the server closed it for good, we reopen with `?after=`. A
 * `reset` (the cursor fell out of retention) reloads everything. Under a filter, events
 * update the rows shown but add none (whether a new row matches is the server's to say):
 * a row that starts or stops matching after an edit or a run stays as it was until the
 * filter changes or the page reloads.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import { parseTableEvent } from "@/contracts/events";
import type { TableView } from "@/contracts/table";
import { answer, api, describeError } from "../api";
import { tableEventsUrl } from "../api-raw";
import { GridRows } from "./model";
import { type RowQuery, rowsPageQuery } from "./row-query";

export type RunView = Schemas["RunView"];

export type StreamState = "connecting" | "live" | "reconnecting";

const PAGE = 1_000;

export interface LiveTable {
  table: TableView | null;
  rows: GridRows;
  version: number;
  runs: RunView[];
  loaded: { rows: number; done: boolean };
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
  const rows = useRef(new GridRows()).current;
  const queryRef = useRef(query);
  /** Each read of the rows; pages of a read that a newer one replaced are dropped. */
  const readCount = useRef(0);
  const [rowsError, setRowsError] = useState<string | null>(null);
  const [table, setTable] = useState<TableView | null>(null);
  const [version, setVersion] = useState(0);
  const [runs, setRuns] = useState<RunView[]>([]);
  const [loaded, setLoaded] = useState({ rows: 0, done: false });
  const [stream, setStream] = useState<StreamState>("connecting");
  const [limitNotice, setLimitNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const frame = useRef<number | null>(null);
  const runsTimer = useRef<ReturnType<typeof setTimeout> | null>(null);

  /** One re-render per animation frame, however many events arrived in it. */
  const bump = useCallback(() => {
    if (frame.current !== null) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = null;
      setVersion(rows.version);
    });
  }, [rows]);

  const loadRuns = useCallback(async () => {
    try {
      const r = await answer(
        api.GET("/api/tables/{id}/runs", { params: { path: { id: tableId } } }),
      );
      setRuns(r.runs);
    } catch {
      // A missed refresh is retried by the next event or tick.
    }
  }, [tableId]);

  /** At most one runs refresh per 600 ms, whatever triggers it. */
  const refreshRuns = useCallback(() => {
    if (runsTimer.current) return;
    runsTimer.current = setTimeout(() => {
      runsTimer.current = null;
      void loadRuns();
    }, 600);
  }, [loadRuns]);

  const loadTable = useCallback(async () => {
    const t = await answer(api.GET("/api/tables/{id}", { params: { path: { id: tableId } } }));
    setTable(t);
  }, [tableId]);

  const loadRows = useCallback(async () => {
    const read = ++readCount.current;
    const query = queryRef.current;
    let count = 0;
    let first = true;
    let cursor: string | null = null;
    setLoaded({ rows: 0, done: false });
    do {
      const page: Schemas["RowPage"] = await answer(
        api.GET("/api/tables/{id}/rows", {
          params: { path: { id: tableId }, query: rowsPageQuery(query, cursor, PAGE) },
        }),
      );
      if (read !== readCount.current) return;
      if (first) rows.reset(page.rows, query.sort !== null);
      else rows.appendPage(page.rows);
      first = false;
      count += page.rows.length;
      cursor = page.nextCursor;
      setLoaded({ rows: count, done: cursor === null });
      bump();
    } while (cursor);
    setRowsError(null);
  }, [tableId, rows, bump]);

  const fetchRows = useCallback(
    async (ids: string[]) => {
      if (ids.length > 50) return loadRows();
      const fetched = await Promise.all(
        ids.map((rowId) =>
          answer(
            api.GET("/api/tables/{id}/rows/{rowId}", { params: { path: { id: tableId, rowId } } }),
          ).catch(() => null),
        ),
      );
      const found = fetched.filter((r) => r !== null);
      rows.upsert(found, { onlyShown: queryRef.current.where.length > 0 });
      const gone = ids.filter((id) => !found.some((r) => r.id === id));
      if (gone.length > 0) rows.remove(gone);
      bump();
    },
    [tableId, rows, bump, loadRows],
  );

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
    let closed = false;
    let source: EventSource | null = null;
    let lastSeq: string | null = null;
    let held: MessageEvent[] | null = [];
    let retry: ReturnType<typeof setTimeout> | null = null;

    const handle = (e: MessageEvent) => {
      if (e.lastEventId) lastSeq = e.lastEventId;
      if (held) {
        held.push(e);
        return;
      }
      let raw: unknown;
      try {
        raw = JSON.parse(String(e.data));
      } catch {
        return;
      }
      // A kind this page does not know, or data that does not fit: skipped, not guessed at.
      const event = parseTableEvent(e.type, raw);
      if (!event) return;
      switch (event.event) {
        case "cell": {
          if (rows.applyCell(event.data)) bump();
          refreshRuns();
          break;
        }
        case "rows": {
          if (event.data.op === "delete") {
            rows.remove(event.data.rowIds);
            bump();
          } else void fetchRows(event.data.rowIds);
          break;
        }
        case "schema":
          void loadTable().then(bump, () => undefined);
          break;
        case "dispatch":
          refreshRuns();
          break;
        case "limit": {
          const cap = event.data.reason === "run_credit_cap";
          setLimitNotice(
            `${cap ? "Credit cap reached" : "Usage limit reached"} — ${event.data.message}`,
          );
          refreshRuns();
          break;
        }
        case "reset":
          reload();
          break;
      }
    };
    const open = () => {
      if (closed) return;
      source = new EventSource(tableEventsUrl(tableId, lastSeq));
      for (const type of ["cell", "rows", "schema", "dispatch", "limit", "reset"])
        source.addEventListener(type, handle as EventListener);
      source.onopen = () => setStream("live");
      source.onerror = () => {
        if (!source || source.readyState === EventSource.CLOSED) {
          // The server refused or the connection broke for good: reopen from where we were.
          setStream("reconnecting");
          source?.close();
          retry = setTimeout(open, 2_000);
        } else setStream("reconnecting");
      };
    };

    open();
    void (async () => {
      await loadAll();
      const buffered = held ?? [];
      held = null;
      for (const e of buffered) handle(e);
    })();

    return () => {
      closed = true;
      if (retry) clearTimeout(retry);
      source?.close();
    };
  }, [tableId, rows, bump, loadTable, loadAll, refreshRuns, fetchRows, reload]);

  // A new filter or sort reads the rows again (the first read is loadAll's).
  const queryKey = JSON.stringify(query);
  const readKey = useRef(queryKey);
  useEffect(() => {
    queryRef.current = query;
    if (readKey.current === queryKey) return;
    readKey.current = queryKey;
    loadRows().catch((err: unknown) => setRowsError(describeError(err)));
  }, [query, queryKey, loadRows]);

  // Active runs: counts refresh every second so the progress bars move.
  const active = runs.some((r) => r.status === "active");
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => void loadRuns(), 1_000);
    return () => clearInterval(t);
  }, [active, loadRuns]);

  return {
    table,
    rows,
    version,
    runs,
    loaded,
    stream,
    limitNotice,
    error,
    rowsError,
    dismissLimit: () => setLimitNotice(null),
    setTable,
    refreshRuns,
    reload,
  };
}

"use client";
/**
 * A table's rows as the grid shows them: all those the filter matches, in the sort's
 * order, read page by page and shown as each page comes (a read that a newer one replaced
 * drops its pages; a new filter, sort or view reads them again, and says why when it
 * could not),
 * single rows read again when an event says they changed, and all the shown rows read
 * again (merged, never reset) when a run's event stands for many cells. Any number of changes
 * re-render the grid once per animation frame (`bump`).
 */
import { useCallback, useEffect, useRef, useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import { answer, api, describeError } from "../api";
import { REFETCH_ONE_BY_ONE } from "./bulk-refetch";
import { GridRows } from "./model";
import { ROWS_PAGE, type RowQuery, readKey, rowsPageQuery } from "./row-query";
import { useBulkRefetch } from "./use-bulk-refetch";

const PAGE = ROWS_PAGE;

/** Above this many changed rows, reading them all again is cheaper than one by one. */
const FETCH_ONE_BY_ONE = REFETCH_ONE_BY_ONE;

export function useRowReads(tableId: string, query: RowQuery) {
  const rows = useRef(new GridRows()).current;
  const queryRef = useRef(query);
  /** Each read of the rows; pages of a read that a newer one replaced are dropped. */
  const readCount = useRef(0);
  const [version, setVersion] = useState(0);
  const [loaded, setLoaded] = useState({ rows: 0, done: false });
  /** Why the rows of the current filter or sort could not be read. */
  const [rowsError, setRowsError] = useState<string | null>(null);
  const frame = useRef<number | null>(null);

  /** One re-render per animation frame, however many events arrived in it. */
  const bump = useCallback(() => {
    if (frame.current !== null) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = null;
      setVersion(rows.version);
    });
  }, [rows]);

  /** Reads the rows again; a failure is kept as `rowsError` (a view that no longer fits: its 409). */
  const loadRows = useCallback(async () => {
    const read = ++readCount.current;
    const query = queryRef.current;
    let count = 0;
    let first = true;
    let cursor: string | null = null;
    setLoaded({ rows: 0, done: false });
    // A new read is not the last one's failure (another view's 409 must not stay shown).
    setRowsError(null);
    try {
      do {
        const page: Schemas["RowPage"] = await answer(
          api.GET("/api/tables/{id}/rows", {
            params: { path: { id: tableId }, query: rowsPageQuery(query, cursor, PAGE) },
          }),
        );
        if (read !== readCount.current) return;
        // A view may sort: its rows keep the server's order too.
        if (first) rows.reset(page.rows, query.sort !== null || query.view !== undefined);
        else rows.appendPage(page.rows);
        first = false;
        count += page.rows.length;
        cursor = page.nextCursor;
        setLoaded({ rows: count, done: cursor === null });
        bump();
      } while (cursor);
    } catch (err) {
      if (read !== readCount.current) return;
      setRowsError(describeError(err));
      // Done, with what it read: the count must not say "Loading rows…" forever.
      setLoaded({ rows: count, done: true });
    }
  }, [tableId, rows, bump]);

  const fetchRows = useCallback(
    async (ids: string[]) => {
      if (ids.length > FETCH_ONE_BY_ONE) return loadRows();
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

  // A new filter or sort reads the rows again (the first read is the page's); a view
  // opened by URL and then filled in from its list asks for the same rows, and is not; a
  // view saved again is (`readKey`).
  const queryKey = readKey(query, PAGE);
  const lastKey = useRef(queryKey);
  useEffect(() => {
    queryRef.current = query;
    if (lastKey.current === queryKey) return;
    lastKey.current = queryKey;
    void loadRows();
  }, [query, queryKey, loadRows]);

  const bulkRefetch = useBulkRefetch({ tableId, rows, bump, queryRef, readCount, fetchRows });

  return { rows, version, loaded, rowsError, bump, loadRows, fetchRows, bulkRefetch };
}

"use client";
/**
 * A table's rows as the grid shows them: the filter's matches in the sort's order, held
 * as a window of a few pages around what is on screen (`row-window.ts` says which page to
 * read next; `model.ts` holds them), never every page: the first page and the count
 * (`total`) first, then the pages the screen scrolls to — next to the window by cursor,
 * or far from it by a jump (the last page by `from=end`, the middle by `seek`). A read
 * that a newer one replaced drops its pages; a new filter, sort or view reads them again
 * from the start, and says why when it could not. Single rows are read again when an
 * event says they changed, and the window's pages again (merged, never reset) when a
 * run's event stands for many cells. Any number of changes re-render the grid once per
 * animation frame (`bump`).
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { describeError } from "../api";
import { GridRows } from "./model";
import { ROWS_PAGE, type RowQuery, readKey, rowsPageQuery } from "./row-query";
import { useBulkRefetch } from "./use-bulk-refetch";
import { useRowEvents } from "./use-row-events";
import { type PageQuery, useRowWindow } from "./use-row-window";

const PAGE = ROWS_PAGE;

export function useRowReads(tableId: string, query: RowQuery) {
  const rows = useRef(new GridRows<PageQuery>()).current;
  const queryRef = useRef(query);
  /** Each full read of the rows; pages of a read that a newer one replaced are dropped. */
  const readCount = useRef(0);
  /** Each new window (a full read or a jump): a page read for an older one is dropped. */
  const windowCount = useRef(0);
  const [version, setVersion] = useState(0);
  /** Whether the first page of the current read is in (or failed). */
  const [done, setDone] = useState(false);
  /** Moves with each new filter or sort: the grid scrolls back to the top. */
  const [readId, setReadId] = useState(0);
  // Why the rows of the current filter or sort could not be read.
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

  const win = useRowWindow({ tableId, rows, bump, queryRef, readCount, windowCount });
  const { readPage, fill, reread, again, top, show } = win;

  /** Reads the rows again from the first page; a failure is kept as `rowsError` (a view that no longer fits: its 409). */
  const loadRows = useCallback(async () => {
    const read = ++readCount.current;
    windowCount.current++;
    const query = queryRef.current;
    setDone(false);
    // A new read is not the last one's failure (another view's 409 must not stay shown).
    setRowsError(null);
    try {
      const q = rowsPageQuery(query, { at: "start" }, PAGE);
      const page = await readPage({ ...q, total: "true" });
      if (read !== readCount.current) return;
      rows.reset(page, q, { start: 0, total: page.total ?? page.rows.length });
      setDone(true);
      bump();
      void fill();
    } catch (err) {
      if (read !== readCount.current) return;
      setRowsError(describeError(err));
      // Done: the count must not say "Loading rows…" forever.
      setDone(true);
    }
  }, [rows, bump, readPage, fill]);

  const events = useRowEvents({ tableId, rows, bump, queryRef, reread, again });
  const { fetchRows, deleted, rowsEvent, readAgain } = events;

  // A new filter or sort reads the rows again (the first read is the page's); a view
  // opened by URL and then filled in from its list asks for the same rows, and is not; a
  // view saved again is (`readKey`).
  const queryKey = readKey(query, PAGE);
  const lastKey = useRef(queryKey);
  useEffect(() => {
    queryRef.current = query;
    if (lastKey.current === queryKey) return;
    lastKey.current = queryKey;
    // A new filter or sort starts at its first row; a reload (a `reset`) stays where it is.
    top();
    setReadId((n) => n + 1);
    void loadRows();
  }, [query, queryKey, loadRows, top]);

  const bulkRefetch = useBulkRefetch({ rows, reread, fetchRows });

  return {
    rows,
    version,
    // The count follows the events' inserts and deletes (read at each render).
    loaded: { rows: done ? rows.total : 0, done },
    readId,
    rowsError,
    bump,
    loadRows,
    rowsEvent,
    deleted,
    readAgain,
    bulkRefetch,
    show,
  };
}

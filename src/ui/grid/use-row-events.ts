"use client";
/**
 * What the `rows` events do to the grid's window: rows inserted or edited are read by id
 * (many at once: the window's pages again, or the window again from its end), deleted
 * ones leave. A row read by id joins
 * the window only where it would show — after the last row, with no filter (whether it
 * matches one is the server's to say) — else only rows shown are updated. The count
 * follows: with no filter it is read again (the table's maintained count: events held
 * while the first page was read may name rows it already counted), one read at a time;
 * under a filter a deleted row that was shown leaves it (`GridRows.remove`). A bulk event
 * (an import's batch, a bulk delete: no ids, a count) reads the window again where it
 * stands, with its count.
 */
import { type RefObject, useCallback, useRef } from "react";
import type { RowsEventData } from "@/contracts/events";
import { answer, api } from "../api";
import { REFETCH_ONE_BY_ONE } from "./bulk-refetch";
import type { GridRows } from "./model";
import { type RowQuery, rowsPageQuery } from "./row-query";

/** Above this many changed rows, reading them all again is cheaper than one by one. */
const FETCH_ONE_BY_ONE = REFETCH_ONE_BY_ONE;

/** Whether the rows read may leave some of the table's out (a filter, or a view's). */
const filtered = (q: RowQuery): boolean => q.where.length > 0 || q.view !== undefined;

export function useRowEvents<Q>(o: {
  tableId: string;
  rows: GridRows<Q>;
  bump: () => void;
  queryRef: RefObject<RowQuery>;
  reread: () => Promise<void>;
  again: () => Promise<void>;
}) {
  const { tableId, rows, bump, queryRef, reread, again } = o;
  const counting = useRef({ reading: false, again: false }).current;

  /** The count read again (no filter: the table's maintained count, no scan). */
  const recount = useCallback(async () => {
    if (counting.reading) {
      counting.again = true;
      return;
    }
    counting.reading = true;
    try {
      do {
        counting.again = false;
        const q = queryRef.current;
        const page = await answer(
          api.GET("/api/tables/{id}/rows", {
            params: {
              path: { id: tableId },
              query: rowsPageQuery(q, { at: "start" }, 1, { total: true }),
            },
          }),
        );
        if (q === queryRef.current && page.total !== undefined) rows.counted(page.total);
        bump();
      } while (counting.again);
    } catch {
      // The next insert or delete reads it again.
    } finally {
      counting.reading = false;
    }
  }, [tableId, rows, bump, queryRef, counting]);

  /**
   * The window read again after bulk events, one read at a time: an import's forty
   * events while one is in flight make one more read, not forty.
   */
  const rereading = useRef({ busy: false, again: false }).current;
  const readAgain = useCallback(async () => {
    if (rereading.busy) {
      rereading.again = true;
      return;
    }
    rereading.busy = true;
    try {
      do {
        rereading.again = false;
        await again();
      } while (rereading.again);
    } catch {
      // The next event, scroll or filter reads it again.
    } finally {
      rereading.busy = false;
    }
  }, [again, rereading]);

  const fetchRows = useCallback(
    async (ids: string[]) => {
      // Many: the window's pages again, or, holding the last row, the window from its end
      // again (the rows inserted after it show).
      if (ids.length > FETCH_ONE_BY_ONE) return rows.atEnd ? again() : reread();
      const fetched = await Promise.all(
        ids.map((rowId) =>
          answer(
            api.GET("/api/tables/{id}/rows/{rowId}", { params: { path: { id: tableId, rowId } } }),
          ).catch(() => null),
        ),
      );
      const found = fetched.filter((r) => r !== null);
      const q = queryRef.current;
      rows.upsert(found, { onlyShown: filtered(q) || !rows.atEnd });
      const gone = ids.filter((id) => !found.some((r) => r.id === id));
      if (gone.length > 0) rows.remove(gone);
      bump();
    },
    [tableId, rows, bump, queryRef, reread, again],
  );

  /** Rows deleted (by this page or an event): out of the window and the count. */
  const deleted = useCallback(
    (ids: readonly string[]) => {
      rows.remove(ids);
      if (!filtered(queryRef.current)) void recount();
      bump();
    },
    [rows, bump, queryRef, recount],
  );

  const rowsEvent = useCallback(
    (e: RowsEventData) => {
      // A bulk insert or delete names no row: the window is read again where it stands,
      // with its count (rows gone leave it, rows added where it shows join it).
      if (e.bulk) return void readAgain();
      if (e.op === "delete") return deleted(e.rowIds);
      if (e.op === "insert" && !filtered(queryRef.current)) void recount();
      void fetchRows(e.rowIds);
    },
    [queryRef, fetchRows, deleted, recount, readAgain],
  );

  return { fetchRows, deleted, rowsEvent, readAgain };
}

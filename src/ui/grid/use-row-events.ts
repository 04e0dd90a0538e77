"use client";
/**
 * What the `rows` events do to the grid's window: rows inserted or edited are read by id
 * (many at once: the window's pages again, or the window again from its end), deleted
 * ones leave. A row read by id joins
 * the window only where it would show — after the last row, with no filter (whether it
 * matches one is the server's to say) — else only rows shown are updated. The count
 * follows: an insert adds to it when no filter may leave the rows out, a delete takes
 * each row off once (`GridRows.remove`).
 */
import { type RefObject, useCallback } from "react";
import type { RowsEventData } from "@/contracts/events";
import { answer, api } from "../api";
import { REFETCH_ONE_BY_ONE } from "./bulk-refetch";
import type { GridRows } from "./model";
import type { RowQuery } from "./row-query";

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
      if (gone.length > 0) rows.remove(gone, { heldOnly: filtered(q) });
      bump();
    },
    [tableId, rows, bump, queryRef, reread, again],
  );

  /** Rows deleted (by this page or an event): out of the window and the count. */
  const deleted = useCallback(
    (ids: readonly string[]) => {
      rows.remove(ids, { heldOnly: filtered(queryRef.current) });
      bump();
    },
    [rows, bump, queryRef],
  );

  const rowsEvent = useCallback(
    (e: RowsEventData) => {
      if (e.op === "delete") return deleted(e.rowIds);
      if (e.op === "insert" && !filtered(queryRef.current)) rows.inserted(e.rowIds.length);
      void fetchRows(e.rowIds);
    },
    [rows, queryRef, fetchRows, deleted],
  );

  return { fetchRows, deleted, rowsEvent };
}

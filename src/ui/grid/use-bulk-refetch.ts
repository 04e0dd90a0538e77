"use client";
/**
 * The grid's answer to a run's `dispatch` event that stands for many cells
 * (`bulk-refetch.ts` says which rows it reads again): a few rows by id (`fetchRows`), or
 * the shown rows again, page by page, merged like any read: no reset, so an event newer than
 * the read stays (`upsert`'s merge rule), and no row is added (only shown rows are
 * updated). A read that a new filter or sort replaced stops. Asked for again while one
 * waits or reads, one more read follows it: a burst of bulk changes costs at most two reads.
 */
import { type RefObject, useCallback, useRef } from "react";
import type { Schemas } from "@/client/cellflow-client";
import type { DispatchEventData } from "@/contracts/events";
import { answer, api } from "../api";
import { refetchFor } from "./bulk-refetch";
import type { GridRows } from "./model";
import { ROWS_PAGE, type RowQuery, rowsPageQuery } from "./row-query";

/** How long a refresh waits for more bulk changes to fold into it. */
const REFRESH_AFTER_MS = 500;

export function useBulkRefetch(o: {
  tableId: string;
  rows: GridRows;
  bump: () => void;
  queryRef: RefObject<RowQuery>;
  /** The count of full reads: one started since this refresh began makes it stop. */
  readCount: RefObject<number>;
  fetchRows: (ids: string[]) => Promise<void>;
}): (event: DispatchEventData) => void {
  const { tableId, rows, bump, queryRef, readCount, fetchRows } = o;
  const state = useRef({ timer: false, reading: false, again: false }).current;

  const reread = useCallback(async () => {
    const read = readCount.current;
    const query = queryRef.current;
    let cursor: string | null = null;
    do {
      const got: Schemas["RowPage"] = await answer(
        api.GET("/api/tables/{id}/rows", {
          params: { path: { id: tableId }, query: rowsPageQuery(query, cursor, ROWS_PAGE) },
        }),
      );
      if (read !== readCount.current) return;
      rows.upsert(got.rows, { onlyShown: true });
      bump();
      cursor = got.nextCursor;
    } while (cursor);
  }, [tableId, rows, bump, queryRef, readCount]);

  const refresh = useCallback(() => {
    if (state.reading) {
      state.again = true;
      return;
    }
    if (state.timer) return;
    state.timer = true;
    setTimeout(() => {
      state.timer = false;
      state.reading = true;
      void reread()
        // A missed refresh is made up by the next bulk event or a full read.
        .catch(() => undefined)
        .finally(() => {
          state.reading = false;
          if (state.again) {
            state.again = false;
            refresh();
          }
        });
    }, REFRESH_AFTER_MS);
  }, [state, reread]);

  return useCallback(
    (event: DispatchEventData) => {
      const refetch = refetchFor(event, (after, last) => rows.idsInPositions(after, last));
      if (refetch.kind === "rows") void fetchRows(refetch.rowIds);
      else if (refetch.kind === "shown") refresh();
    },
    [rows, fetchRows, refresh],
  );
}

"use client";
/**
 * The grid's answer to a run's `dispatch` event that stands for many cells
 * (`bulk-refetch.ts` says which rows it reads again): a few rows by id (`fetchRows`), or
 * the window's pages again (`reread`: the pages that read the shown rows, not the table),
 * merged like any read: no reset, so an event newer than the read stays (`upsert`'s merge
 * rule), and no row is added (only shown rows are updated). A read that a new filter,
 * sort or jump replaced stops. Asked for again while one waits or reads, one more read
 * follows it: a burst of bulk changes costs at most two reads.
 */
import { useCallback, useRef } from "react";
import type { DispatchEventData } from "@/contracts/events";
import { refetchFor } from "./bulk-refetch";
import type { GridRows } from "./model";

/** How long a refresh waits for more bulk changes to fold into it. */
const REFRESH_AFTER_MS = 500;

export function useBulkRefetch<Q>(o: {
  rows: GridRows<Q>;
  /** Reads the window's pages again (stops when a newer read replaced the window). */
  reread: () => Promise<void>;
  fetchRows: (ids: string[]) => Promise<void>;
}): (event: DispatchEventData) => void {
  const { rows, reread, fetchRows } = o;
  const state = useRef({ timer: false, reading: false, again: false }).current;

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

/**
 * What the grid reads again after a run's `dispatch` event that stands for many cells'
 * changes: a stamping page, a Stop or a halt over more than CELL_EVENTS_UP_TO cells writes no
 * `cell` event per cell (docs/api.md "Events"). Invariant: every shown row whose cells
 * such an event may have changed is read again — a stamped page's rows (those shown in
 * its position range) by id when they are few, else all the rows shown, as for a Stop or
 * a halt, whose event does not say which rows. An event whose cells came with their own `cell`
 * events, or that changed no cell (a run's end), reads nothing.
 */
import { CELL_EVENTS_UP_TO, type DispatchEventData } from "@/contracts/events";

export type Refetch = { kind: "none" } | { kind: "rows"; rowIds: string[] } | { kind: "shown" };

/** Above this many rows, reading all the shown rows again beats reading them one by one. */
export const REFETCH_ONE_BY_ONE = 50;

export function refetchFor(
  event: DispatchEventData,
  /** The shown rows whose position is after `after` and at most `last`. */
  shownIn: (after: number, last: number) => string[],
): Refetch {
  if (event.cancelled !== undefined || event.unstamped !== undefined) return { kind: "shown" };
  const page = event.stamped;
  if (!page || page.cells <= CELL_EVENTS_UP_TO) return { kind: "none" };
  const rowIds = shownIn(page.afterPosition, page.lastPosition);
  if (rowIds.length === 0) return { kind: "none" };
  return rowIds.length <= REFETCH_ONE_BY_ONE ? { kind: "rows", rowIds } : { kind: "shown" };
}

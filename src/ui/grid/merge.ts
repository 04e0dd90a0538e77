/**
 * How the grid folds cell events into what it shows. Invariant: an event for an older
 * attempt never overwrites a newer one. Attempts are ordered by execution id (`ex2_`
 * ids sort by when the cell was stamped; older `ex_` ids have no order among themselves
 * and are older than any `ex2_` id). Within one attempt, a terminal state (completed,
 * error, cancelled) is final: a late or replayed event of that attempt cannot revive it.
 */

import type { CellEventData } from "@/contracts/events";
import { type CellOutcome, type CellStatus, isTerminal } from "@/domain/statuses";

export type { CellStatus };

export interface CellView {
  status: CellStatus;
  outcome?: CellOutcome | null;
  executionId: string;
  error?: string | null;
  runningBlockIds?: string[];
  blockErrors?: Record<string, string>;
  /** A waterfall's cell: the step whose answer it holds. */
  winningStep?: number;
}

/** A `cell` event's data (API.md "Events"): `status: null` when the cell is gone. */
export type CellEvent = CellEventData;

/** 1 when `a` is a later attempt than `b`, -1 when earlier, 0 when the same, null when unknown. */
export function compareAttempts(a: string, b: string): 1 | -1 | 0 | null {
  if (a === b) return 0;
  const ordered = (id: string) => id.startsWith("ex2_");
  if (ordered(a) && ordered(b)) return a > b ? 1 : -1;
  if (ordered(a)) return 1;
  if (ordered(b)) return -1;
  return null;
}

/**
 * Whether `incoming` should replace `current`: a later attempt, or the same attempt not
 * going back from a terminal state. Unordered (old) ids: the newest to arrive wins.
 */
export function accepts(current: CellView | undefined, incoming: CellView): boolean {
  if (!current) return true;
  const order = compareAttempts(incoming.executionId, current.executionId);
  if (order === 1 || order === null) return true;
  if (order === -1) return false;
  return !(isTerminal(current.status) && !isTerminal(incoming.status));
}

/**
 * The cell after an event (null: the event says it is gone), and the outputs to write
 * into the row (none when refused). A "gone" event of an older attempt is refused like
 * any other: it cannot remove the newer attempt's cell.
 */
export function mergeCell(
  current: CellView | undefined,
  event: CellEvent,
): { cell: CellView | null | undefined; outputs: Record<string, unknown> | null } {
  const { rowId: _row, groupId: _group, attempt: _attempt, outputs, status, ...rest } = event;
  if (status === null) {
    const older = current && compareAttempts(event.executionId, current.executionId) === -1;
    return { cell: older ? current : null, outputs: null };
  }
  const incoming: CellView = { ...rest, status };
  if (!accepts(current, incoming)) return { cell: current ?? incoming, outputs: null };
  return { cell: incoming, outputs: outputs ?? null };
}

/** The newer of the cell shown and the cell a read returned (the read may predate an event). */
export function newerCell(current: CellView | undefined, read: CellView): CellView {
  return accepts(current, read) ? read : (current ?? read);
}

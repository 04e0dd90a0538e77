/**
 * How the grid folds cell events into what it shows. Invariant: an event for an older
 * attempt never overwrites a newer one. Attempts are ordered by execution id (`ex2_`
 * ids sort by when the cell was stamped; older `ex_` ids have no order among themselves
 * and are older than any `ex2_` id). Within one attempt, a terminal state (completed,
 * error, cancelled) is final: a late or replayed event of that attempt cannot revive it.
 */

import type { CellStatus } from "../../domain/statuses";

export type { CellStatus };

export interface CellView {
  status: CellStatus;
  outcome?: string | null;
  executionId: string;
  error?: string | null;
  runningBlockIds?: string[];
  blockErrors?: Record<string, string>;
}

/** A `cell` event's data (API.md "Events"). */
export interface CellEvent extends CellView {
  rowId: string;
  groupId: string;
  /** The attempt number of the write (0 while queued; each claim of the execution counts up). */
  attempt?: number;
  outputs?: Record<string, unknown>;
}

const TERMINAL: ReadonlySet<CellStatus> = new Set(["completed", "error", "cancelled"]);
export const isTerminal = (s: CellStatus) => TERMINAL.has(s);

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

/** The cell after an event, and the outputs to write into the row (none when refused). */
export function mergeCell(
  current: CellView | undefined,
  event: CellEvent,
): { cell: CellView; outputs: Record<string, unknown> | null } {
  if (!accepts(current, event)) return { cell: current ?? event, outputs: null };
  const { rowId: _row, groupId: _group, outputs, ...cell } = event;
  return { cell, outputs: outputs ?? null };
}

/**
 * Every status in Cellflow is defined here once, as a tuple. The pgEnums in db/schema,
 * the zod enums in contracts and the predicates below are all derived from these tuples,
 * so adding a status is a compile error everywhere a switch forgets it.
 */

export const CELL_STATUSES = [
  "queued",
  "running",
  "paused",
  "completed",
  "error",
  "cancelled",
] as const;
export type CellStatus = (typeof CELL_STATUSES)[number];

/** Why a fenced write of an attempt was refused: a Stop, a newer attempt, a delete. */
export type LostReason = "cancelled" | "stale" | "gone";

/**
 * How a `completed` cell ended: an answer (`ok`), a required input empty (`skipped`), no
 * provider or waterfall step found anything (`not_found`), the group's `runIf` did not
 * hold on the row (`condition_not_met`), or a paid call would have passed the row's
 * budget in its run (`over_budget`). Only `ok` from a provider is ever charged.
 */
export const CELL_OUTCOMES = [
  "ok",
  "skipped",
  "not_found",
  "condition_not_met",
  "over_budget",
] as const;
export type CellOutcome = (typeof CELL_OUTCOMES)[number];

/** A sub-workflow run inside an attempt (a `workflow` block's call, a `foreach` item's). */
export const CHILD_RUN_STATUSES = ["running", "completed", "error", "cancelled"] as const;
export type ChildRunStatus = (typeof CHILD_RUN_STATUSES)[number];

/** How a child run ended, as its record keeps it: each end status with what it holds. */
export type ChildRunEnd =
  | { status: "completed"; output: unknown }
  | { status: "error"; error: string }
  | { status: "cancelled" };

export const DISPATCH_STATUSES = ["active", "completed", "cancelled", "halted"] as const;
export type DispatchStatus = (typeof DISPATCH_STATUSES)[number];

/**
 * `stale`: cells never run, and completed cells whose last attempt ended longer ago than
 * the run's `staleAfterHours` (error and cancelled cells are not stale).
 */
export const RUN_MODES = ["all", "incomplete", "new", "failed", "stale"] as const;
export type RunMode = (typeof RUN_MODES)[number];

/** Why a dispatch is `halted`: the workspace's month ran out, or the run's own cap. */
export const HALT_REASONS = ["monthly_credits", "run_credit_cap"] as const;
export type HaltReason = (typeof HALT_REASONS)[number];

export const HOOK_ACTIONS = ["insert_rows", "run"] as const;
export type HookAction = (typeof HOOK_ACTIONS)[number];

/** Where a row's delivery to a destination stands (the outbox, store/destinations). */
export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

/** Where a row index (store/row-indexes) stands: pending → building → ready | failed. */
export const ROW_INDEX_STATUSES = ["pending", "building", "ready", "failed"] as const;
export type RowIndexStatus = (typeof ROW_INDEX_STATUSES)[number];

/**
 * What a row index serves: a sort direction's btree on a column's sort key (each
 * direction its own: empty keys last and ties by position ascending in both), or a gin
 * pg_trgm index on the lowered text, for `contains`.
 */
export const ROW_INDEX_KINDS = ["sort_asc", "sort_desc", "trgm"] as const;
export type RowIndexKind = (typeof ROW_INDEX_KINDS)[number];

export const EVENT_KINDS = ["cell", "dispatch", "limit", "schema", "rows", "progress"] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/**
 * A ledger entry: credits set aside before a paid call (`reserved`), or charged for an
 * answer whose recording write won its fence (`charged`). A reservation never becomes
 * anything else: it is settled into a charge or deleted (released).
 */
export const CREDIT_STATES = ["reserved", "charged"] as const;
export type CreditState = (typeof CREDIT_STATES)[number];

export const PLANS = ["free", "pro", "unlimited"] as const;
export type Plan = (typeof PLANS)[number];

/** A cell a worker may still act on: Stop turns exactly these into `cancelled`. */
export function isInFlight(status: CellStatus): boolean {
  switch (status) {
    case "queued":
    case "running":
    case "paused":
      return true;
    case "completed":
    case "error":
    case "cancelled":
      return false;
    default:
      return assertNever(status);
  }
}

export function isTerminal(status: CellStatus): boolean {
  return !isInFlight(status);
}

export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`);
}

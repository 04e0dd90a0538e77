/**
 * The engine's error vocabulary: why an attempt stopped short. Invariant: every reason
 * an attempt can be ended with (an abort reason, a thrown refusal) is one of these
 * classes, each carries its `cause`, and is recognised only through the predicates below.
 *
 * The predicates read a brand (a `Symbol.for` key, shared by every copy of this module),
 * not `instanceof` and not `name`: the web server's bundle has its own copy of these
 * classes, and a Stop issued there aborts attempts registered by the worker's copy.
 * This module imports nothing from the rest of src but the domain.
 */
import type { LostReason } from "@/domain/statuses";

const KIND: unique symbol = Symbol.for("cellflow.error-kind") as never;

type Kind =
  | "cancelled"
  | "interrupted"
  | "deadline"
  | "lost-authority"
  | "usage-halt"
  | "over-budget"
  | "shared-limiter-required"
  | "over-rate-limit";

function kindOf(value: unknown): unknown {
  return typeof value === "object" && value !== null
    ? (value as { [KIND]?: unknown })[KIND]
    : undefined;
}

/** Abort reason: a user stopped the cell (a Stop or a cancel). */
export class CancelledError extends Error {
  readonly [KIND]: Kind = "cancelled";
  constructor(options?: ErrorOptions) {
    super("Stopped by a user", options);
    this.name = "CancelledError";
  }
}

/** Abort reason: the worker is shutting down; the cell goes back to the queue. */
export class InterruptedError extends Error {
  readonly [KIND]: Kind = "interrupted";
  constructor(options?: ErrorOptions) {
    super("The worker stopped during the run", options);
    this.name = "InterruptedError";
  }
}

/** Abort reason: the attempt ran past its time limit; the message says which. */
export class DeadlineError extends Error {
  readonly [KIND]: Kind = "deadline";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "DeadlineError";
  }
}

/** A fenced write was refused: another attempt, a Stop or a delete owns the cell now. */
export class LostAuthority extends Error {
  readonly [KIND]: Kind = "lost-authority";
  constructor(
    readonly reason: LostReason,
    options?: ErrorOptions,
  ) {
    super(`the cell is ${reason}`, options);
    this.name = "LostAuthority";
  }
}

/** The month's credits (or the run's cap) are used up: the cell goes back to un-run. */
export class UsageLimitHalt extends Error {
  readonly [KIND]: Kind = "usage-halt";
  constructor(options?: ErrorOptions) {
    super("the month's credits are used up", options);
    this.name = "UsageLimitHalt";
  }
}

/**
 * A paid call refused because it would take its row past the run's per-row budget
 * (`maxCreditsPerRow`): the whole cell ends `completed`, outcome `over_budget`, its
 * outputs blank; the run goes on. `source` names what was refused, `credits` its cost.
 */
export class RowBudgetExceeded extends Error {
  readonly [KIND]: Kind = "over-budget";
  constructor(
    readonly source: string,
    readonly credits: number,
    options?: ErrorOptions,
  ) {
    super("the row's credit budget for this run is used up", options);
    this.name = "RowBudgetExceeded";
  }
}

/**
 * A paid call refused because this process's limiter counts only its own calls, where
 * every run is a process of its own: the message says what to configure.
 */
export class SharedLimiterRequired extends Error {
  readonly [KIND]: Kind = "shared-limiter-required";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SharedLimiterRequired";
  }
}

/**
 * A call that weighs more than its rate limit allows in a whole window (an llm call whose
 * token reservation is over the tokens per minute): it could never go, so it is refused
 * at once instead of waiting out its deadline. The message says what to change.
 */
export class OverRateLimit extends Error {
  readonly [KIND]: Kind = "over-rate-limit";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "OverRateLimit";
  }
}

export const isCancelled = (e: unknown): e is CancelledError => kindOf(e) === "cancelled";
export const isInterrupted = (e: unknown): e is InterruptedError => kindOf(e) === "interrupted";
export const isDeadline = (e: unknown): e is DeadlineError => kindOf(e) === "deadline";
export const isLostAuthority = (e: unknown): e is LostAuthority => kindOf(e) === "lost-authority";
export const isUsageLimitHalt = (e: unknown): e is UsageLimitHalt => kindOf(e) === "usage-halt";
export const isRowBudgetExceeded = (e: unknown): e is RowBudgetExceeded =>
  kindOf(e) === "over-budget";
export const isSharedLimiterRequired = (e: unknown): e is SharedLimiterRequired =>
  kindOf(e) === "shared-limiter-required";
export const isOverRateLimit = (e: unknown): e is OverRateLimit => kindOf(e) === "over-rate-limit";

/**
 * Named points between the statements of the engine's multi-statement flows. A test (or
 * the model test's scheduler) passes a `pause` to hold a flow at one of them and release
 * it when the interleaving it wants has happened; production passes none and pays
 * nothing. Each point sits between two commits, never inside a transaction, so holding
 * it holds no row or table lock; a carrier (or a re-drive) held at one keeps its row's
 * advisory lock, which only turns other carriers of that row away.
 */
export type RacePoint =
  /** The dispatch row is committed; no page of it is stamped yet. */
  | "run:created"
  /** Before each stamping page of a run (the request's and the background job's). */
  | "run:page"
  /** Stamping done, before the first window is handed out. */
  | "run:stamped"
  /** A Stop's transaction committed; before it frees window slots. */
  | "stop:committed"
  /** A carrier holds the row lock; before each cascade step. */
  | "carrier:step"
  /** Before a carrier's auto-run stamp. */
  | "carrier:auto"
  /** Before a carrier releases the row lock. */
  | "carrier:release"
  /** After a carrier released the row; before it hands out and chains. */
  | "carrier:released"
  /**
   * A re-drive pass is about to judge an orphan candidate's row afresh: holding its row
   * lock when the row has running cells, before re-reading its queued cells otherwise.
   */
  | "redrive:row"
  /** Before a re-drive pass slides the active dispatches. */
  | "redrive:advance"
  /** A schedule PATCH merged from its read; before its write guarded on that read. */
  | "schedule:merged";

export type Pause = (point: RacePoint, detail?: Readonly<Record<string, string>>) => Promise<void>;

/** Holds at a point when a pause was injected; nothing otherwise. */
export function at(
  pause: Pause | undefined,
  point: RacePoint,
  detail?: Readonly<Record<string, string>>,
): Promise<void> | undefined {
  return pause?.(point, detail);
}

/**
 * The engine handle: what every engine verb of a worker's carriers runs with, built once
 * by the composition root (src/runtime/engine.ts) and passed down as one object. Each
 * verb takes `(engine, request)`; the request-side verbs (a run, a Stop, a row edit, an
 * auto-fire), which run in the web process where no worker is assembled, take the
 * smaller `RequestEngine` the same way. Invariants: the process-wide pieces (the batchers, the
 * lock sessions, the definitions cache, the table wake-ups, the rate lines) exist once per
 * handle and are reached only through it, never by a module-level lookup; the handle's
 * batchers, lock hub and wake-ups are over the handle's database, so a test that builds
 * two handles over two databases gets two of each. What a Stop issued by an API route
 * must reach (the attempt registry and the run-cancel drainers' wakers, see
 * cancellation.ts and run-cancel-loop.ts) stays process-wide: the route may run in a
 * second copy of the modules, which no handle reaches.
 */
import type { Database, Db } from "@db/client";
import type { TaskBackend } from "@/backends/port";
import type { Logger } from "@/config/log";
import { TableWaker } from "@/events/waker";
import type { RateLines } from "@/limits/rate/line";
import type { Metrics } from "@/metrics/registry";
import { AdvanceBatcher } from "./advance-batcher";
import { Definitions } from "./definitions";
import { type LockHub, lockHubClosedWith } from "./lock-sessions";
import type { Pause } from "./race-points";
import { RowDeadlines } from "./row-deadline";
import { StepBatcher } from "./step-batcher";

/** What the handle's verbs share over one database: built once per database per process. */
export interface EngineResources {
  /** The carriers' row steps, many per statement (step-batcher.ts). */
  readonly steps: StepBatcher;
  /** The window slides of released rows, many per statement (advance-batcher.ts). */
  readonly advances: AdvanceBatcher;
  /** The row locks, on a few shared sessions (lock-sessions.ts). */
  readonly locks: LockHub;
  /** Parsed schemas, group orders and workflow definitions (definitions.ts). */
  readonly definitions: Definitions;
  /** Coalesced wake-ups of the tables' event streams (events/waker.ts). */
  readonly waker: TableWaker;
  /** The deadlines of the rows whose cascades are in flight (row-deadline.ts). */
  readonly deadlines: RowDeadlines;
}

/**
 * What the request-side verbs (`startRun`, `stopRuns`, `editRow`, `autoFire`, …) run
 * with: the database the request writes through, the backend its carriers are enqueued
 * on, and the tests' race points. A service's context is one as it is; a worker passes
 * the database its code already writes through (`{ db, backend }`).
 */
export interface RequestEngine {
  readonly db: Db;
  readonly backend: TaskBackend;
  /** Tests: hold the request between its statements (see race-points.ts). */
  readonly pause?: Pause;
  /** A Stop over more queued cells than this records them by scope (default STOP_EAGER_UP_TO). */
  readonly stopEagerUpTo?: number;
}

export interface Engine extends EngineResources {
  readonly database: Database;
  readonly backend: TaskBackend;
  readonly log: Logger;
  /**
   * The lines in front of the process's one rate limiter (`lines.limiter`), in front of
   * every paid provider call, with the provider cool-downs.
   */
  readonly lines: RateLines;
  /** Reuse paid enrichments' answers this young (CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS; 0: off). */
  readonly enrichmentCacheTtlMs: number;
  /**
   * Take a row the window just handed out in this job instead of queueing it (default
   * true). Off on trigger.dev, where a run is one row: its tags, metadata and cancel
   * then mean that row.
   */
  readonly chain?: boolean;
  /**
   * Refuse paid and rate-limited calls with a per-process limiter (trigger.dev, where
   * each run is its own process and a per-process limit multiplies by the runs).
   */
  readonly requireSharedLimiter?: boolean;
  /**
   * Attempts read their cell's tombstone this often (trigger.dev: the Stop's notice does
   * not reach a run's process, and its run is cancelled only when nothing else rides on it).
   */
  readonly stopCheckMs?: number;
  /**
   * The process's Prometheus series (src/metrics): the carriers, claims, attempts,
   * provider calls and credits are counted here, in memory; absent, nothing is counted.
   */
  readonly metrics?: Metrics;
  /** What the carrier is doing, for a dashboard (trigger.dev run metadata). */
  readonly progress?: (event: CarrierProgress) => void;
  /** Tests: hold the carrier between its statements (see race-points.ts). */
  readonly pause?: Pause;
  /** Re-acquire rounds after release (default MAX_ROUNDS; tests make it small). */
  readonly maxRounds?: number;
}

export type CarrierProgress =
  | { kind: "row"; tableId: string; rowId: string }
  | { kind: "attempt"; groupId: string; executionId: string; end?: string };

/**
 * The shared pieces over `database`. The lock sessions close with the database (they
 * are checked out of its pool for good, and its pool does not end while they are out).
 */
export function engineResources(database: Database): EngineResources {
  const locks = lockHubClosedWith(database);
  return {
    steps: new StepBatcher(locks.db),
    advances: new AdvanceBatcher(locks.db),
    locks,
    definitions: new Definitions(),
    waker: new TableWaker(database),
    deadlines: new RowDeadlines(),
  };
}

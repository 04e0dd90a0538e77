/**
 * The maintenance jobs, one table both runtimes schedule from: the local worker
 * (graphile-worker crons, src/server/worker-runtime.ts) and trigger.dev (scheduled tasks,
 * src/trigger/maintenance.ts). Invariant: every job is idempotent, so overlapping
 * schedules, several workers running the same cron, or a retried run only repeat work.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Env } from "@/config/env";
import { rewriteCovered } from "@/engine/covered-rewrite-loop";
import { startDestinationLoop } from "@/engine/destination-loop";
import { senderSettings } from "@/engine/destination-send";
import { type RedriveEngine, redriveOrphans } from "@/engine/redrive";
import { drainRunCancels, drainSettingsFromEnv } from "@/engine/run-cancel-drain";
import { maintainRowIndexes } from "@/services/row-indexes";
import { fireDueSchedules } from "@/services/schedule-fire";
import { pruneChildRuns } from "@/store/child-runs/prune";
import { pruneDestinationDeliveries } from "@/store/destinations/prune";
import { pruneEnrichmentCache } from "@/store/enrichment-cache/prune";
import { pruneEvents } from "@/store/events/prune";
import { pruneExecutionSteps } from "@/store/execution-steps/prune";
import { pruneHookDeliveries } from "@/store/hook-deliveries/prune";
import { prunePendingCarriers } from "@/store/pending-carriers/entries";
import { foldCounts } from "@/store/progress/fold";
import { pruneRateLimitLogs } from "@/store/rate-limits/prune";
import { pruneRunKeys } from "@/store/run-keys/prune";
import { pruneStops } from "@/store/stops/prune";
import { releaseStaleTestRuns } from "@/store/usage/release-test-run";

export type Runtime = "local" | "trigger";

export interface MaintenanceContext {
  /** What of the engine handle the jobs use. */
  engine: RedriveEngine;
  env: Pick<
    Env,
    | "EVENTS_RETENTION_HOURS"
    | "CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS"
    | "CELLFLOW_CANCEL_RATE_PER_SECOND"
    | "CELLFLOW_CANCEL_CONCURRENCY"
    | "CELLFLOW_DESTINATION_RETRY_BASE_MS"
  >;
  /** Aborted when the job must end (shutdown, or its run's time is nearly up). */
  signal: AbortSignal;
}

export interface MaintenanceJob {
  id: string;
  /** Five-field cron, UTC. */
  cron: string;
  /** Where the job is scheduled this way (see each job for how the other runtime covers it). */
  runtimes: readonly Runtime[];
  /** What it did, as counts (logged when any is not zero). */
  run(ctx: MaintenanceContext): Promise<Record<string, number>>;
  /** A trigger.dev run's budget when the default (300 s) is too short for one step of it. */
  maxDurationS?: number;
}

/** Old rows of the tables that only grow otherwise. */
export const PRUNE: MaintenanceJob = {
  id: "prune-events",
  cron: "*/10 * * * *",
  runtimes: ["local", "trigger"],
  run: async ({ engine, env }) => {
    const db = engine.database.db;
    return {
      events: await pruneEvents(db, env.EVENTS_RETENTION_HOURS),
      deliveries: await pruneHookDeliveries(db),
      stops: await pruneStops(db),
      rateLimitLogs: await pruneRateLimitLogs(db),
      pendingCarriers: await prunePendingCarriers(db),
      enrichmentCache: await pruneEnrichmentCache(db, env.CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS),
      childRuns: await pruneChildRuns(db),
      runKeys: await pruneRunKeys(db),
      executionSteps: await pruneExecutionSteps(db),
      destinationDeliveries: await pruneDestinationDeliveries(db),
      // Reservations of test runs whose process died before their end.
      testRunReservations: await releaseStaleTestRuns(db),
    };
  },
};

/**
 * The re-drive on trigger.dev, every minute. A local worker runs it every
 * REDRIVE_EVERY_MS (15 s) with an orphan probe between passes instead: a minute's
 * granularity would be the slowest part of healing a crash on one machine.
 */
export const REDRIVE: MaintenanceJob = {
  id: "redrive-orphans",
  cron: "* * * * *",
  runtimes: ["trigger"],
  run: async ({ engine }) => ({ ...(await redriveOrphans(engine)) }),
};

/**
 * The run-cancel outbox on trigger.dev: finishes what the API process's drainer left (it
 * ended, or the web app runs where nothing outlives a response). Locally a Stop aborts
 * attempts over LISTEN and the server's own drainer empties the outbox.
 */
export const DRAIN_RUN_CANCELS: MaintenanceJob = {
  id: "drain-run-cancels",
  cron: "* * * * *",
  runtimes: ["trigger"],
  run: async ({ engine, env, signal }) => ({
    ...(await drainRunCancels({
      db: engine.database.db,
      backend: engine.backend,
      log: engine.log,
      settings: drainSettingsFromEnv(env),
      signal,
    })),
  }),
};

/**
 * The rewrite of large Stops' covered cells (engine/covered-rewrite-loop.ts), every
 * minute in both runtimes: what a Stop in a process without a loop (the web app, the
 * trigger.dev deployment), or a crash, left. A local worker's loop also runs it at once
 * after a Stop made in its process.
 */
export const REWRITE_COVERED: MaintenanceJob = {
  id: "rewrite-covered",
  cron: "* * * * *",
  runtimes: ["local", "trigger"],
  run: async ({ engine, signal }) => ({
    ...(await rewriteCovered({ db: engine.database.db, backend: engine.backend }, { signal })),
  }),
};

/** How often a process folds the progress counters (and sends the `progress` events due). */
export const FOLD_EVERY_MS = 500;
/** How long one run of the trigger.dev schedule folds: its minute, less a margin. */
const FOLD_RUN_MS = 55_000;

/**
 * The progress counters' fold on trigger.dev. A schedule fires at most once a minute and
 * a `progress` event is due every second while cells change, so each run folds every
 * FOLD_EVERY_MS for its minute (a run that overlaps the next skips the turns the other
 * takes: the fold's lock). A local worker folds every FOLD_EVERY_MS on its own. Reads
 * never wait for a fold (they add the unfolded deltas): it keeps them few.
 */
export const FOLD_COUNTS: MaintenanceJob = {
  id: "fold-counts",
  cron: "* * * * *",
  runtimes: ["trigger"],
  run: async ({ engine, signal }) => {
    const until = Date.now() + FOLD_RUN_MS;
    const total = { deltas: 0, events: 0 };
    while (!signal.aborted && Date.now() < until) {
      const r = await foldCounts(engine.database.db);
      total.deltas += r?.deltas ?? 0;
      total.events += r?.events ?? 0;
      await sleep(FOLD_EVERY_MS, undefined, { signal }).catch(() => undefined);
    }
    return total;
  },
};

/**
 * Table schedules on trigger.dev: the schedules due at this minute start their runs (a
 * due time is taken once whoever looks, see services/schedule-fire.ts), so a run starts
 * at most a minute after its time (a cron has minutes only, so it is at most the minute
 * itself plus the task's start). Passes follow one another while each reads a full page,
 * until the task's time is up, so however many are due they start this minute. A local
 * worker looks every SCHEDULE_EVERY_MS instead.
 */
export const FIRE_SCHEDULES: MaintenanceJob = {
  id: "fire-schedules",
  cron: "* * * * *",
  runtimes: ["trigger"],
  run: async ({ engine, signal }) => ({
    ...(await fireDueSchedules(
      { db: engine.database.db, backend: engine.backend, log: engine.log },
      () => new Date(),
      { signal },
    )),
  }),
};

/** How long one run of the trigger.dev schedule sends: its minute, less a margin. */
const SEND_RUN_MS = 55_000;

/**
 * The destinations' outbox on trigger.dev: each minute's run keeps a sender (the one a
 * local worker runs all the time, src/engine/destination-loop.ts) for its minute, so a
 * finished row leaves within about a second while a run is alive, and within the gap
 * between two runs (a few seconds) otherwise. A run that overlaps the next only takes
 * turns with it: the drain holds an advisory lock, and claims are leases.
 */
export const DRAIN_DESTINATIONS: MaintenanceJob = {
  id: "drain-destinations",
  cron: "* * * * *",
  runtimes: ["trigger"],
  run: async ({ engine, env, signal }) => {
    const loop = startDestinationLoop(
      senderSettings({
        db: engine.database.db,
        log: engine.log,
        retryBaseMs: env.CELLFLOW_DESTINATION_RETRY_BASE_MS,
      }),
    );
    await sleep(SEND_RUN_MS, undefined, { signal }).catch(() => undefined);
    await loop.stop();
    return {};
  },
};

/**
 * The row indexes (services/row-indexes.ts): drops those of deleted columns and tables,
 * builds the recorded ones. A local worker also runs it at once when a read records one
 * or a schema edit may retire one; on trigger.dev this is the only way they are built.
 */
export const ROW_INDEXES: MaintenanceJob = {
  id: "row-indexes-sweep",
  cron: "* * * * *",
  runtimes: ["local", "trigger"],
  // One `create index concurrently` scans the whole `rows` table of the deployment and
  // cannot be cut short: a run killed mid-build would build it again every minute.
  maxDurationS: 3600,
  run: async ({ engine, signal }) => ({
    ...(await maintainRowIndexes(engine.database, engine.log, signal)),
  }),
};

export const MAINTENANCE_JOBS: readonly MaintenanceJob[] = [
  PRUNE,
  REDRIVE,
  DRAIN_RUN_CANCELS,
  REWRITE_COVERED,
  FOLD_COUNTS,
  FIRE_SCHEDULES,
  DRAIN_DESTINATIONS,
  ROW_INDEXES,
];

/** The jobs a runtime schedules from the table. */
export const jobsFor = (runtime: Runtime): MaintenanceJob[] =>
  MAINTENANCE_JOBS.filter((job) => job.runtimes.includes(runtime));

/** Whether a job's counts say it did anything (only then is it worth a log line). */
export const didSomething = (counts: Record<string, number>): boolean =>
  Object.values(counts).some((n) => n > 0);

/**
 * A worker: graphile-worker running row carriers, plus the cancel listener (on the
 * worker's LISTEN hub). Its
 * connections do not grow with its concurrency: carriers hold their row locks on
 * LOCK_SESSIONS shared sessions and write through a pool of at most WRITE_CONNECTIONS,
 * and graphile-worker gets a small pool of its own (it only fetches and completes jobs).
 * At any concurrency a worker uses at most WRITE_CONNECTIONS + LOCK_SESSIONS + 1 (the
 * cancel LISTEN) + 1 spare + GRAPHILE_CONNECTIONS connections: 28.
 */

import { createDatabase, type Database, type Db } from "@db/client";
import { graphilePool } from "@db/pools";
import { LocalBackend, startLocalWorker } from "@/backends/local";
import { type Env, readEnv } from "@/config/env";
import type { Logger } from "@/config/log";
import { listenForCancels } from "@/engine/cancellation";
import { runCarrier } from "@/engine/carrier";
import { startCoveredRewriteLoop } from "@/engine/covered-rewrite-loop";
import { startDestinationLoop } from "@/engine/destination-loop";
import { senderSettings } from "@/engine/destination-send";
import type { Engine } from "@/engine/handle";
import { LOCK_SESSIONS } from "@/engine/lock-sessions";
import {
  healedSomething,
  ORPHAN_PROBE_EVERY_MS,
  REDRIVE_EVERY_MS,
  redriveOrphans,
} from "@/engine/redrive";
import { runStamper } from "@/engine/stamper";
import { EventHub } from "@/events/hub";
import type { FlushHandle } from "@/metrics/flush-loop";
import { assembleEngine } from "@/runtime/engine";
import { didSomething, FOLD_EVERY_MS, jobsFor } from "@/runtime/maintenance";
import { startMetricsFlush } from "@/runtime/metrics-flush";
import { maintainRowIndexes } from "@/services/row-indexes";
import { fireDueSchedules, SCHEDULE_EVERY_MS } from "@/services/schedule-fire";
import { runningWithoutLock } from "@/store/cells/orphan-probe";
import { foldCounts } from "@/store/progress/fold";
import { flushTracing, initTracing } from "@/tracing/init";

export interface WorkerOptions {
  /** Queries; may be a transaction-mode pooler. */
  url: string;
  /**
   * Direct connection for row locks, LISTEN and graphile-worker (which LISTENs for new
   * jobs too). Default: url.
   */
  sessionUrl?: string;
  driver: "pg" | "neon";
  neonWsProxy?: string;
  concurrency: number;
  /** How often this process runs a re-drive pass. Default: REDRIVE_EVERY_MS. */
  redriveEveryMs?: number;
  /** How often it probes for running cells whose worker died. Default: ORPHAN_PROBE_EVERY_MS. */
  orphanProbeEveryMs?: number;
  /** How often it looks for due table schedules. Default: SCHEDULE_EVERY_MS. */
  scheduleEveryMs?: number;
  /** Settings (rate limiter, events retention…). Default: the environment. */
  env?: Env;
  /** Postgres application_name of its sessions (the jobs pool adds `-jobs`). Default: cellflow-worker. */
  applicationName?: string;
  log: Logger;
}

/** Statements in flight at once: more only queue on 2 cores' worth of Postgres. */
export const WRITE_CONNECTIONS = 16;
/** graphile-worker's pool: job fetches, completions, its LISTEN and our enqueues. */
export const GRAPHILE_CONNECTIONS = 8;

function withApplicationName(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set("application_name", name);
  return u.toString();
}

export interface RunningWorker {
  stop(): Promise<void>;
  /** The rows whose cascades run in this worker now (their deadlines armed). */
  rowsInFlight(): number;
}

/** The worker's database: a write pool sized to its concurrency, plus the lock sessions. */
function workerDatabase(opts: WorkerOptions, sessionUrl: string): Database {
  return createDatabase({
    url: opts.url,
    sessionUrl,
    driver: opts.driver,
    neonWsProxy: opts.neonWsProxy,
    poolMax: Math.min(opts.concurrency, WRITE_CONNECTIONS) + LOCK_SESSIONS + 2,
    // Between the bursts of a run (and between runs) carriers reuse warm connections: a
    // window of 100 carriers opening theirs at once took ~5 s on a 2-core machine (W5).
    idleTimeoutMs: 60_000,
    applicationName: opts.applicationName ?? "cellflow-worker",
  });
}

export async function startWorker(opts: WorkerOptions): Promise<RunningWorker> {
  const log = opts.log.child({ component: "worker" });
  // OTEL_EXPORTER_OTLP_ENDPOINT set: traces (the server's when it runs in this process).
  await initTracing("worker");
  const sessionUrl = opts.sessionUrl ?? opts.url;
  const database = workerDatabase(opts, sessionUrl);
  // graphile-worker's pool, shared by the runner (fetching and completing jobs) and our
  // enqueues; named, so ops (and the connection budget test) tell its sessions apart.
  const jobsPool = graphilePool(
    withApplicationName(sessionUrl, `${opts.applicationName ?? "cellflow-worker"}-jobs`),
    GRAPHILE_CONNECTIONS,
  );
  const backend = new LocalBackend(sessionUrl, { pool: jobsPool });
  const env = opts.env ?? readEnv();
  const runtime = assembleEngine({ runtime: "local", env, database, backend, log });
  const { engine } = runtime;
  const stopping = new AbortController();
  // The process's one LISTEN session over this database: the cancel channel rides it.
  const hub = new EventHub(database.pool, log);
  const listener = listenForCancels(hub, log);
  await listener.ready;
  const runner = await startLocalWorker({
    pgPool: jobsPool,
    concurrency: opts.concurrency,
    log,
    // The maintenance jobs this runtime schedules (the one table both runtimes use).
    crons: jobsFor("local").map((job) => ({
      id: job.id,
      pattern: job.cron,
      run: async () => {
        const counts = await runtime.maintain(job, stopping.signal);
        if (didSomething(counts)) log.info({ job: job.id, ...counts }, "maintenance job done");
      },
    })),
    rowIndexes: async (payload) => {
      try {
        await maintainRowIndexes(database, log, stopping.signal);
      } catch (err) {
        log.error({ err, ...payload }, "row index maintenance failed");
      }
    },
    stamper: async (payload, ctx) => {
      try {
        await runStamper(engine, payload, {
          ...ctx,
          signal: AbortSignal.any([ctx.signal, stopping.signal]),
        });
      } catch (err) {
        log.error({ err, ...payload }, "background stamping failed");
      }
    },
    carrier: async (payload, ctx) => {
      try {
        // Our stop() aborts at once; graphile-worker's own signal only after its grace period.
        const signal = AbortSignal.any([ctx.signal, stopping.signal]);
        await runCarrier(engine, payload, { ...ctx, signal });
      } catch (err) {
        // The engine owns retries: a failed carrier leaves its cells to the re-drive.
        log.error({ err, ...payload }, "carrier failed");
      }
    },
  });
  log.info({ concurrency: opts.concurrency }, "worker started");
  const metrics = startWorkerMetrics(database, env, log);
  const redrive = startRedrive(engine, opts, stopping.signal);
  const folds = startFolds(engine, stopping.signal);
  const scheduler = startScheduler(engine, opts, stopping.signal);
  const loops = startLoops(database.db, backend, log, env);
  let stopped: Promise<void> | undefined;
  return {
    rowsInFlight: () => engine.deadlines.armed(),
    stop() {
      stopped ??= (async () => {
        redrive.stop();
        folds.stop();
        const scheduling = scheduler.stop();
        // Carriers stop first: a drain that cells kept ending into would hold the stop up.
        stopping.abort(new Error("worker stopping"));
        await loops.stop();
        // The pass in hand ends after its schedule (it sees the abort) before the pools go.
        await scheduling;
        await runner.stop();
        await metrics.stop();
        await listener.stop();
        await hub.close();
        await runtime.close();
        await backend.close();
        await jobsPool.end();
        await database.close();
        // The spans of its last carriers, before the process may end.
        await flushTracing().catch((err: unknown) => log.warn({ err }, "traces not flushed"));
      })();
      return stopped;
    },
  };
}

/**
 * The loops every worker runs beside its carriers. The destinations' outbox: every worker
 * drains and sends; the drain's lock and the claims' leases make several workers take
 * turns, not send twice. A large Stop made in this process has its covered cells
 * rewritten at once (the maintenance job picks up the rest).
 */
function startLoops(
  db: Db,
  backend: LocalBackend,
  log: Logger,
  env: Env,
): { stop(): Promise<void> } {
  const destinations = startDestinationLoop(
    senderSettings({ db, log, retryBaseMs: env.CELLFLOW_DESTINATION_RETRY_BASE_MS }),
  );
  const rewrites = startCoveredRewriteLoop({ db, backend, log });
  return {
    async stop() {
      await destinations.stop();
      await rewrites.stop();
    },
  };
}

/**
 * The process's metrics flush: its own loop, or the server's when the worker runs in the
 * server's process. Stopped after the carriers, so their last counts go with the last flush.
 */
function startWorkerMetrics(database: Database, env: Env, log: Logger): FlushHandle {
  return startMetricsFlush({
    db: database.db,
    kind: "worker",
    log,
    everyMs: env.CELLFLOW_METRICS_FLUSH_MS,
  });
}

/**
 * The re-drive, every REDRIVE_EVERY_MS in every worker process: passes are idempotent,
 * so several processes only duplicate enqueues (a duplicate carrier finds the lock
 * taken), with an orphan probe between passes.
 */
function startRedrive(
  engine: Engine,
  opts: WorkerOptions,
  stopping: AbortSignal,
): { stop(): void } {
  const { log } = engine;
  let redriving = false;
  const pass = (probe: boolean) => {
    if (redriving || stopping.aborted) return;
    redriving = true;
    // A probe that finds no running cell without its row lock ends there: a few ms.
    (probe ? runningWithoutLock(engine.database.db) : Promise.resolve(1))
      .then((suspects) => (suspects > 0 ? redriveOrphans(engine) : null))
      .then((r) => {
        // Only what was healed is news; a pass that only slid windows (it can free a slot
        // before a finishing carrier does, in a healthy run too) is not.
        if (r && healedSomething(r)) log.info(r, "re-drive healed orphans");
        else if (r && r.handedOut > 0) log.debug(r, "re-drive slid windows");
      })
      .catch((err: unknown) => log.warn({ err }, "re-drive pass failed; the next one retries"))
      .finally(() => {
        redriving = false;
      });
  };
  const redrive = setInterval(() => pass(false), opts.redriveEveryMs ?? REDRIVE_EVERY_MS);
  redrive.unref();
  const probe = setInterval(() => pass(true), opts.orphanProbeEveryMs ?? ORPHAN_PROBE_EVERY_MS);
  probe.unref();
  return {
    stop() {
      clearInterval(redrive);
      clearInterval(probe);
    },
  };
}

/**
 * The progress counters' fold, every FOLD_EVERY_MS in every worker process: a fold that
 * finds another one running skips its turn, so several workers only take turns. It also
 * sends the `progress` events due (at most one a second per table).
 */
function startFolds(engine: Engine, stopping: AbortSignal): { stop(): void } {
  let folding = false;
  const timer = setInterval(() => {
    if (folding || stopping.aborted) return;
    folding = true;
    foldCounts(engine.database.db)
      .catch((err: unknown) =>
        engine.log.warn({ err }, "counter fold failed; the next one retries"),
      )
      .finally(() => {
        folding = false;
      });
  }, FOLD_EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * The table schedules, every SCHEDULE_EVERY_MS in every worker process: a due time is
 * taken once whichever process looks first (services/schedule-fire.ts), so several
 * workers only race for it. A pass still going skips the turn.
 */
function startScheduler(
  engine: Engine,
  opts: WorkerOptions,
  stopping: AbortSignal,
): { stop(): Promise<void> } {
  let pass: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (pass || stopping.aborted) return;
    pass = fireDueSchedules(
      { db: engine.database.db, backend: engine.backend, log: engine.log },
      () => new Date(),
      { signal: stopping },
    )
      .then(() => undefined)
      .catch((err: unknown) =>
        engine.log.warn({ err }, "schedule pass failed; the next one retries"),
      )
      .finally(() => {
        pass = undefined;
      });
  }, opts.scheduleEveryMs ?? SCHEDULE_EVERY_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await pass;
    },
  };
}

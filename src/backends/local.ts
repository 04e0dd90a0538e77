import { setMaxListeners } from "node:events";
import type { Db } from "@db/client";
import { graphilePool, type JobsPool } from "@db/pools";
/**
 * The local task backend: graphile-worker in the same Postgres (its own schema). Jobs are
 * added after the engine's own transaction committed, or inside it (`launchWindowIn`: they
 * exist only if it commits), keyed per row so a row waiting for a carrier has at most one
 * waiting job. The engine decides retries, so jobs run once.
 */
import {
  makeWorkerUtils,
  type Runner,
  run,
  Logger as WorkerLogger,
  type WorkerUtils,
} from "graphile-worker";
import type { Logger } from "@/config/log";
import { advanceWithLocalJobs, type LocalJob } from "@/store/local-jobs/launch-window";
import {
  type CancelOutcome,
  CarrierPayloadSchema,
  type EnqueueSpec,
  type RowIndexesPayload,
  RowIndexesPayloadSchema,
  type StampHandler,
  StampPayloadSchema,
  TASKS,
  type TaskBackend,
  type TaskHandler,
} from "./port";

/** Stands for a row id in a job built before the rows are known (launchWindowIn). */
const ROW_PLACEHOLDER = "__cellflow_row_id__";

/** A spec as graphile-worker's `job_spec` reads it: the engine decides retries, so one attempt. */
function localJob(s: EnqueueSpec): LocalJob {
  return {
    identifier: s.task,
    payload: s.payload,
    job_key: s.idempotencyKey,
    max_attempts: 1,
    ...(s.delayMs ? { run_at: new Date(Date.now() + s.delayMs).toISOString() } : {}),
  };
}

export class LocalBackend implements TaskBackend {
  readonly kind = "local" as const;
  readonly remoteCancel = false;
  private utils: Promise<WorkerUtils> | undefined;
  private pool: JobsPool | undefined;
  private readonly ownsPool: boolean;

  /** `pool`: a graphile-worker pool to share (a worker's runner's); not ended by close(). */
  constructor(
    private readonly connectionString: string,
    opts: { pool?: JobsPool } = {},
  ) {
    this.pool = opts.pool;
    this.ownsPool = !opts.pool;
  }

  private workerUtils(): Promise<WorkerUtils> {
    if (this.utils) return this.utils;
    const made = (async () => {
      // Our pool, ended and awaited by close() (see ownPool).
      this.pool ??= graphilePool(this.connectionString, 10);
      const utils = await makeWorkerUtils({ pgPool: this.pool });
      try {
        await utils.migrate();
      } catch (err) {
        await Promise.resolve(utils.release()).catch(() => {});
        throw err;
      }
      return utils;
    })();
    this.utils = made;
    // A failure (the database away at that moment) must not stick: cached, it failed every
    // enqueue after, for the life of the process. The next call tries again.
    made.catch(() => {
      if (this.utils === made) this.utils = undefined;
    });
    return made;
  }

  async enqueue(specs: EnqueueSpec[]): Promise<void> {
    if (specs.length === 0) return;
    const utils = await this.workerUtils();
    await utils.addJobs(
      specs.map((s) => ({
        identifier: s.task,
        payload: s.payload,
        jobKey: s.idempotencyKey,
        maxAttempts: 1,
        ...(s.delayMs ? { runAt: new Date(Date.now() + s.delayMs) } : {}),
      })),
      true,
    );
  }

  /**
   * The run's window slid and its carriers' jobs added in the caller's transaction on the
   * same database, in one statement (store/local-jobs/launch-window.ts). The schema is
   * migrated first, on graphile-worker's pool, as `enqueue` does.
   */
  async launchWindowIn(
    tx: Db,
    dispatchId: string,
    carrier: (rowId: string) => EnqueueSpec,
  ): Promise<{ rowIds: string[]; completed: boolean }> {
    await this.workerUtils();
    return advanceWithLocalJobs(tx, dispatchId, {
      template: localJob(carrier(ROW_PLACEHOLDER)),
      placeholder: ROW_PLACEHOLDER,
    });
  }

  /** Local attempts are aborted through the cancel channel (NOTIFY); jobs end with them. */
  async cancelRun(_runId: string): Promise<CancelOutcome> {
    return { ok: true, value: "gone" };
  }

  async close(): Promise<void> {
    const utils = this.utils;
    this.utils = undefined;
    const pool = this.ownsPool ? this.pool : undefined;
    if (this.ownsPool) this.pool = undefined;
    try {
      if (utils) await (await utils.catch(() => undefined))?.release();
    } finally {
      await pool?.end();
    }
  }
}

export interface CronJob {
  /** Task id, also the crontab identifier. */
  id: string;
  /** Crontab pattern (minute hour day month weekday). */
  pattern: string;
  run(): Promise<void>;
}

export interface LocalWorkerOptions {
  /** graphile-worker's pool (see graphilePool); the caller ends it after the runner. */
  pgPool: JobsPool;
  concurrency: number;
  carrier: TaskHandler;
  stamper: StampHandler;
  /** Builds and drops row indexes (services/row-indexes.ts), on the maintenance runner. */
  rowIndexes?: (payload: RowIndexesPayload) => Promise<void>;
  crons?: CronJob[];
  log: Logger;
}

/** What the worker runtime keeps of its runners: their stop. */
export interface LocalRunners {
  stop(): Promise<void>;
}

/**
 * Background stamping and the maintenance crons get a runner of their own, with these
 * slots: carriers chain row after row and hold their runner's slots while a run has work,
 * so in one runner a stamper queued behind a window's carriers never started and a large
 * run stayed at the rows its request stamped (a graphile-worker runner fetches only the
 * tasks of its own list, so the two never take each other's jobs).
 */
export const SERVICE_CONCURRENCY = 2;

/**
 * Starts this process's graphile-worker runners: one for the carriers (`concurrency`
 * slots) and one for the stampers and the maintenance crons (SERVICE_CONCURRENCY).
 */
export async function startLocalWorker(opts: LocalWorkerOptions): Promise<LocalRunners> {
  const common = {
    pgPool: opts.pgPool,
    noHandleSignals: true,
    // New jobs arrive by LISTEN/NOTIFY; the poll only covers a lost notification.
    pollInterval: 2000,
    logger: workerLogger(opts.log),
  } as const;
  const carriers = await run({
    ...common,
    concurrency: opts.concurrency,
    taskList: {
      [TASKS.carrier]: async (raw, helpers) => {
        await opts.carrier(CarrierPayloadSchema.parse(raw), {
          runId: String(helpers.job.id),
          signal: sharedSignal(helpers.abortSignal),
        });
      },
    },
  });
  let service: Runner;
  try {
    service = await run({
      ...common,
      concurrency: SERVICE_CONCURRENCY,
      // Cron runs are deduplicated by graphile-worker across every worker process.
      crontab: (opts.crons ?? []).map((c) => `${c.pattern} ${c.id} ?max=1`).join("\n"),
      taskList: {
        ...Object.fromEntries((opts.crons ?? []).map((c) => [c.id, async () => c.run()])),
        [TASKS.stamper]: async (raw, helpers) => {
          await opts.stamper(StampPayloadSchema.parse(raw), {
            runId: String(helpers.job.id),
            signal: sharedSignal(helpers.abortSignal),
          });
        },
        [TASKS.rowIndexes]: async (raw) => {
          await opts.rowIndexes?.(RowIndexesPayloadSchema.parse(raw));
        },
      },
    });
  } catch (err) {
    await carriers.stop();
    throw err;
  }
  return {
    async stop() {
      await Promise.all([carriers.stop(), service.stop()]);
    },
  };
}

/** One shutdown signal is shared by every running job, each listening once. */
function sharedSignal(signal: AbortSignal | undefined): AbortSignal {
  const s = signal ?? new AbortController().signal;
  setMaxListeners(0, s);
  return s;
}

/** graphile-worker's log lines through our structured logger. */
function workerLogger(log: Logger): WorkerLogger {
  const child = log.child({ component: "graphile-worker" });
  return new WorkerLogger(() => (level, message, meta) => {
    const fields = { ...(meta ?? {}) };
    if (level === "error") child.error(fields, message);
    // By design: carriers use none of graphile-worker's pool (see worker-runtime.ts).
    else if (level === "warning" && message.includes("maxPoolSize")) child.debug(fields, message);
    else if (level === "warning") child.warn(fields, message);
    else if (level === "info") child.debug(fields, message);
    else child.trace(fields, message);
  });
}

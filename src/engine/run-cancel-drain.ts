/**
 * Drains the run-cancel outbox: the remote runs a Stop or a table delete found running.
 * A platform cancel ends the whole run, so it is made only when the run carries nothing
 * the Stop did not cover, judged just before the call (`spareRunCancel`): why at drain
 * time rather than in the Stop's transaction is that the verdict must hold when the call
 * lands, and between the Stop and the drain (milliseconds with the server's drainer, a
 * minute with the scheduled one, hours of retries in an outage) the run can take on new
 * work (a run request stamping on the row it still holds). A spared run meanwhile needs no
 * call: its stopped attempt finds its tombstone by itself (engine/attempt.ts, the stop
 * check) and the run goes on with the rest of its row. Guarantees, per drainer: at most `concurrency` cancel calls in flight, and calls started
 * no faster than `ratePerSecond` (after a first `burst`), so the platform's API rate limit
 * is respected whatever the outbox holds. A run the platform answered as cancelled, or as
 * not running any more, leaves the outbox; a transient failure (5xx, network, 429) is
 * tried again by any drainer after a backoff or the platform's Retry-After; a permanent
 * failure, or a cancel still failing after `giveUpAfterMs`, is logged and dropped. A drop
 * never breaks a Stop: the tombstone already fenced the run's writes; the run only uses
 * compute until its maxDuration.
 */
import type { Db } from "@db/client";
import type { TaskBackend } from "@/backends/port";
import type { Env } from "@/config/env";
import type { Logger } from "@/config/log";
import { sleep } from "@/domain/sleep";
import {
  leaseRunCancels,
  type PendingCancel,
  retryRunCancel,
  settleRunCancel,
  spareRunCancel,
} from "@/store/run-cancels/outbox";

export interface DrainSettings {
  /** Cancel calls in flight at once. */
  concurrency: number;
  /** Cancel calls started per second, sustained. */
  ratePerSecond: number;
  /** Calls that may start at once before the rate applies. */
  burst: number;
  /** How long a drainer holds the rows it took; past it, another drainer may take them. */
  leaseMs: number;
  /** A cancel failing for longer than this is dropped. */
  giveUpAfterMs: number;
  /** The wait before try n+1 after n failures, when the platform named none. */
  backoffMs: (failures: number) => number;
}

export const DEFAULT_CANCEL_RATE_PER_SECOND = 20;
export const DEFAULT_CANCEL_CONCURRENCY = 10;
const MIN_RETRY_MS = 100;

export function drainSettings(over: Partial<DrainSettings> = {}): DrainSettings {
  const ratePerSecond = over.ratePerSecond ?? DEFAULT_CANCEL_RATE_PER_SECOND;
  return {
    concurrency: DEFAULT_CANCEL_CONCURRENCY,
    // Ten seconds' worth: a Stop of a few hundred runs goes out at once.
    burst: Math.max(1, Math.round(ratePerSecond * 10)),
    leaseMs: 30_000,
    giveUpAfterMs: 6 * 3_600_000,
    backoffMs: (n) => Math.min(60_000, 500 * 2 ** Math.min(n - 1, 10)) * (0.5 + Math.random() / 2),
    ...over,
    ratePerSecond,
  };
}

/** The settings a deployment chose (TRIGGER_CANCEL_*), defaults for the rest. */
export function drainSettingsFromEnv(
  env: Pick<Env, "CELLFLOW_CANCEL_RATE_PER_SECOND" | "CELLFLOW_CANCEL_CONCURRENCY">,
): DrainSettings {
  return drainSettings({
    ...(env.CELLFLOW_CANCEL_RATE_PER_SECOND
      ? { ratePerSecond: env.CELLFLOW_CANCEL_RATE_PER_SECOND }
      : {}),
    ...(env.CELLFLOW_CANCEL_CONCURRENCY ? { concurrency: env.CELLFLOW_CANCEL_CONCURRENCY } : {}),
  });
}

/** A token bucket: `take` resolves when a call may start. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
    this.last = Date.now();
  }

  async take(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const now = Date.now();
      this.tokens = Math.min(
        this.burst,
        this.tokens + ((now - this.last) / 1000) * this.ratePerSecond,
      );
      this.last = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      if (signal?.aborted) return;
      const waitMs = Math.ceil(((1 - this.tokens) / this.ratePerSecond) * 1000);
      await sleep(waitMs);
    }
  }
}

export interface DrainReport {
  cancelled: number;
  /** Runs left alive: they still carried cells the Stop did not cover. */
  spared: number;
  gone: number;
  retried: number;
  dropped: number;
}

export interface DrainDeps {
  db: Db;
  backend: TaskBackend;
  log: Logger;
  settings: DrainSettings;
  /** Shared by the drains of one drainer, so back-to-back drains keep to the rate. */
  bucket?: TokenBucket;
  /** Aborted: start no new call and write nothing more (a process going away). */
  signal?: AbortSignal;
}

/** Drains until no row is due (or the signal fires); returns what it did. */
export async function drainRunCancels(deps: DrainDeps): Promise<DrainReport> {
  const { db, settings, signal } = deps;
  const bucket = deps.bucket ?? new TokenBucket(settings.ratePerSecond, settings.burst);
  const report: DrainReport = { cancelled: 0, spared: 0, gone: 0, retried: 0, dropped: 0 };
  // A batch must be done well inside its lease even at the configured rate.
  const batch = Math.max(
    1,
    Math.min(
      settings.concurrency * 5,
      Math.floor((settings.ratePerSecond * settings.leaseMs) / 2000),
    ),
  );
  while (!signal?.aborted) {
    const rows = await leaseRunCancels(db, batch, settings.leaseMs);
    if (rows.length === 0) break;
    let next = 0;
    const lane = async () => {
      while (!signal?.aborted) {
        const row = rows[next++];
        if (!row) return;
        await bucket.take(signal);
        if (signal?.aborted) return;
        await cancelOne(deps, row, report);
      }
    };
    await Promise.all(Array.from({ length: Math.min(settings.concurrency, rows.length) }, lane));
  }
  return report;
}

async function cancelOne(deps: DrainDeps, row: PendingCancel, report: DrainReport): Promise<void> {
  const { db, backend, log, settings, signal } = deps;
  // Read just before the call, so the verdict is on the state the cancel would act on.
  if (await spareRunCancel(db, row.runId)) {
    log.debug(
      { runId: row.runId, tableId: row.tableId },
      "run not cancelled: it still carries cells the Stop did not cover",
    );
    report.spared++;
    return;
  }
  const outcome = await backend.cancelRun(row.runId);
  // A drainer told to go writes nothing: its lease runs out and another one settles it.
  if (signal?.aborted) return;
  if (outcome.ok) {
    await settleRunCancel(db, row.runId);
    if (outcome.value === "cancelled") report.cancelled++;
    else report.gone++;
    return;
  }
  const { reason } = outcome;
  if (reason.permanent || row.ageMs > settings.giveUpAfterMs) {
    log.error(
      { runId: row.runId, tableId: row.tableId, attempts: row.attempts, err: reason.message },
      "gave up cancelling a run; its cells stay stopped, the run ends by its maxDuration",
    );
    await settleRunCancel(db, row.runId);
    report.dropped++;
    return;
  }
  // Never straight back: a "Retry-After: 0" during an outage must not make a busy loop.
  const delayMs = Math.max(MIN_RETRY_MS, reason.retryAfterMs ?? settings.backoffMs(row.attempts));
  await retryRunCancel(db, row.runId, delayMs, reason.message);
  report.retried++;
  if (row.attempts === 1 || row.attempts % 10 === 0)
    log.warn(
      { runId: row.runId, attempts: row.attempts, delayMs, err: reason.message },
      "could not cancel a run yet; trying again",
    );
}

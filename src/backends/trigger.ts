/**
 * The trigger.dev task backend: carriers and stampers become trigger.dev runs.
 * Invariants: every trigger carries a global-scope idempotency key (a raw string sent
 * from inside a task, the re-drive's for instance, would be scoped to that run), made
 * once per enqueue call so the SDK's and our own retries of that call never start a
 * second run, while a later enqueue of the same row always starts a new one (trigger.dev
 * keeps a key's run, finished or not, for the key's TTL; the engine's own dedupe is the
 * row lock). With a database (`db`), a carrier enqueued for a row whose carrier run is
 * queued and not started folds into that run (no call): the pending-carriers table holds
 * one entry per such run, written before the trigger, taken back if the trigger fails,
 * and cleared by the run as it starts, before it reads the row; an entry older than
 * FOLD_STALE_MS (a run the platform lost) no longer folds. Delayed carriers (a paused
 * wait's resume) never fold, nor fold others. Many specs go in batches of BATCH_SIZE; a failed call is retried with
 * backoff before the error reaches the caller, whose cells the re-drive then covers.
 * A run's cancel is one call, never retried here: the cancel outbox's drain retries it,
 * paced, and a 404 or 409 answer means the run is not running any more.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "@db/client";
import { idempotencyKeys, TriggerClient } from "@trigger.dev/sdk";
import type { Env } from "@/config/env";
import type { Logger } from "@/config/log";
import { parseRetryAfter } from "@/domain/retry-after";
import { sleep } from "@/domain/sleep";
import {
  claimPendingCarriers,
  dropPendingCarriers,
  type PendingCarrier,
} from "@/store/pending-carriers/entries";
import { type CancelOutcome, type EnqueueSpec, TASKS, type TaskBackend } from "./port";

/** Carrier runs per table at once (the row-carrier task's `concurrency.perKey`). */
export const CARRIERS_PER_TABLE = 50;

/** Items per batch request (the API accepts up to 1,000 in v4). */
export const BATCH_SIZE = 500;
const ATTEMPTS = 5;
const KEY_TTL = "1h";
/**
 * A pending entry this old no longer folds: its run was lost (expired, cancelled from the
 * dashboard, failed before it started). Runs of a table wait behind at most its
 * CARRIERS_PER_TABLE, which the dispatch window also holds, so a live run is seldom
 * queued this long; if one is, the cost is a second run, never a swallowed enqueue.
 */
export const FOLD_STALE_MS = 10 * 60_000;

export interface TriggerBackendOptions {
  accessToken: string;
  /** Default: the trigger.dev cloud. */
  baseURL?: string;
  log: Logger;
  /** Backoff before retry n (1-based), in ms; tests shorten it. */
  backoffMs?: (attempt: number) => number;
  /** Where pending carrier runs are kept, for the fold; without it every enqueue triggers. */
  db?: Db;
}

/**
 * The backend from the environment: the one place it is built, for the API process
 * (backends/instance.ts) and for trigger.dev's task processes (trigger/deps.ts). `db`
 * keeps pending carrier runs beside the cells, for the fold of duplicate carriers.
 */
export function triggerBackendFromEnv(
  env: Pick<Env, "TRIGGER_SECRET_KEY" | "TRIGGER_API_URL">,
  deps: { log: Logger; db: Db },
): TriggerBackend {
  if (!env.TRIGGER_SECRET_KEY)
    throw new Error("TASK_BACKEND=trigger needs TRIGGER_SECRET_KEY (see .env.example)");
  return new TriggerBackend({
    accessToken: env.TRIGGER_SECRET_KEY,
    baseURL: env.TRIGGER_API_URL,
    log: deps.log,
    db: deps.db,
  });
}

const defaultBackoff = (attempt: number) =>
  Math.min(8_000, 250 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);

interface TriggerItem {
  id: string;
  payload: unknown;
  options: {
    idempotencyKey: string;
    idempotencyKeyTTL: string;
    concurrencyKey?: string;
    tags?: string[];
    delay?: string;
  };
}

export class TriggerBackend implements TaskBackend {
  readonly kind = "trigger" as const;
  readonly tableConcurrency = CARRIERS_PER_TABLE;
  readonly remoteCancel = true;
  private readonly client: TriggerClient;
  private readonly backoff: (attempt: number) => number;

  constructor(private readonly opts: TriggerBackendOptions) {
    this.client = new TriggerClient({ accessToken: opts.accessToken, baseURL: opts.baseURL });
    this.backoff = opts.backoffMs ?? defaultBackoff;
  }

  /** Carrier enqueues folded into a queued run of their row since start (a figure for tests). */
  folded = 0;

  async enqueue(all: EnqueueSpec[]): Promise<void> {
    // Row index builds have no task here: the every-minute maintenance task takes them.
    const specs = all.filter((s) => s.task !== TASKS.rowIndexes);
    if (specs.length === 0) return;
    const { toTrigger, claimed } = await this.fold(specs);
    const items = await Promise.all(toTrigger.map((s) => this.item(s)));
    if (items.length === 0) return;
    // Items from this index on were not (known to be) triggered when a call failed.
    let sent = 0;
    try {
      if (items.length === 1 && items[0]) {
        const item = items[0];
        await this.retrying("trigger", () =>
          this.client.tasks.trigger(item.id, item.payload, item.options, {
            retry: { maxAttempts: 1 },
          }),
        );
        return;
      }
      for (; sent < items.length; sent += BATCH_SIZE) {
        const chunk = items.slice(sent, sent + BATCH_SIZE);
        await this.retrying("batch trigger", () =>
          this.client.batch.trigger(chunk, undefined, { retry: { maxAttempts: 1 } }),
        );
      }
    } catch (err) {
      // Entries of runs that never existed would fold the row's enqueues until they go stale.
      if (this.opts.db && claimed.length > 0) {
        const unsent = new Set(toTrigger.slice(sent));
        await dropPendingCarriers(
          this.opts.db,
          claimed.filter((c) => unsent.has(c.spec)).map((c) => c.entry),
        ).catch((dropErr: unknown) =>
          this.opts.log.warn({ err: dropErr }, "pending carrier entries not taken back"),
        );
      }
      throw err;
    }
  }

  /**
   * Which specs to trigger: every spec that cannot fold, and each foldable carrier whose row
   * got a fresh pending entry (its payload then carries the entry's key). The rest fold.
   */
  private async fold(specs: EnqueueSpec[]): Promise<{
    toTrigger: EnqueueSpec[];
    claimed: { spec: EnqueueSpec; entry: PendingCarrier }[];
  }> {
    const db = this.opts.db;
    if (!db) return { toTrigger: specs, claimed: [] };
    const toTrigger: EnqueueSpec[] = [];
    const byRow = new Map<string, { spec: EnqueueSpec; entry: PendingCarrier }>();
    let folded = 0;
    for (const spec of specs) {
      if (spec.task !== TASKS.carrier || spec.delayMs || spec.payload.resumeWait) {
        toTrigger.push(spec);
        continue;
      }
      const { pendingKey: _, ...payload } = spec.payload;
      const seen = byRow.get(payload.rowId);
      // The same row twice in one call: the first one's run carries both.
      if (seen && (!payload.dispatchId || payload.dispatchId === seen.entry.dispatchId)) {
        folded++;
        continue;
      }
      if (seen) {
        toTrigger.push({ ...spec, payload });
        continue;
      }
      const runKey = randomUUID();
      const entry: PendingCarrier = {
        rowId: payload.rowId,
        tableId: payload.tableId,
        runKey,
        ...(payload.dispatchId ? { dispatchId: payload.dispatchId } : {}),
      };
      byRow.set(payload.rowId, {
        spec: { ...spec, payload: { ...payload, pendingKey: runKey } },
        entry,
      });
    }
    const fresh = await claimPendingCarriers(
      db,
      [...byRow.values()].map((c) => c.entry),
      FOLD_STALE_MS,
    );
    const claimed = [...byRow.values()].filter((c) => fresh.has(c.entry.rowId));
    folded += byRow.size - claimed.length;
    this.folded += folded;
    return { toTrigger: [...toTrigger, ...claimed.map((c) => c.spec)], claimed };
  }

  async cancelRun(runId: string): Promise<CancelOutcome> {
    try {
      await this.client.runs.cancel(runId, { retry: { maxAttempts: 1 } });
      return { ok: true, value: "cancelled" };
    } catch (err) {
      const status = (err as { status?: unknown }).status;
      // Finished meanwhile, or unknown: the tombstone already stopped its writes.
      if (status === 404 || status === 409) return { ok: true, value: "gone" };
      const message = err instanceof Error ? err.message : String(err);
      const transient =
        typeof status !== "number" || status === 429 || status === 408 || status >= 500;
      const retryAfterMs = parseRetryAfter(headerOf(err, "retry-after"));
      return {
        ok: false,
        reason: {
          permanent: !transient,
          message: typeof status === "number" ? `${status}: ${message}` : message,
          ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        },
      };
    }
  }

  async close(): Promise<void> {}

  private async item(spec: EnqueueSpec): Promise<TriggerItem> {
    // A claimed carrier's key is its pending entry's: made once, like any other here.
    const unique =
      spec.task === TASKS.carrier && spec.payload.pendingKey
        ? spec.payload.pendingKey
        : randomUUID();
    const idempotencyKey = await idempotencyKeys.create([spec.idempotencyKey, unique], {
      scope: "global",
    });
    return {
      id: spec.task,
      payload: spec.payload,
      options: {
        idempotencyKey,
        idempotencyKeyTTL: KEY_TTL,
        ...(spec.concurrencyKey ? { concurrencyKey: spec.concurrencyKey } : {}),
        ...(spec.tags ? { tags: spec.tags.slice(0, 10) } : {}),
        ...(spec.delayMs ? { delay: `${Math.max(1, Math.ceil(spec.delayMs / 1000))}s` } : {}),
      },
    };
  }

  /** Retries 429, 5xx and network failures; a 4xx other than 429 is a bug, not a blip. */
  private async retrying<T>(what: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        const status = (err as { status?: unknown }).status;
        const transient =
          typeof status !== "number" || status === 429 || status >= 500 || status === 408;
        if (!transient || attempt >= ATTEMPTS) throw err;
        this.opts.log.warn({ err, attempt, status }, `trigger.dev ${what} failed; retrying`);
        await sleep(this.backoff(attempt));
      }
    }
  }
}

/** A response header of the SDK's ApiError (a plain object of lower-cased names). */
function headerOf(err: unknown, name: string): string | undefined {
  const headers = (err as { headers?: unknown }).headers;
  if (headers === null || typeof headers !== "object") return undefined;
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}

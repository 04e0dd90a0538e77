/**
 * The trigger.dev task backend: carriers and stampers become trigger.dev runs.
 * Invariants: every trigger carries a global-scope idempotency key (a raw string sent
 * from inside a task, the re-drive's for instance, would be scoped to that run), made
 * once per enqueue call so the SDK's and our own retries of that call never start a
 * second run, while a later enqueue of the same row always starts a new one (trigger.dev
 * keeps a key's run, finished or not, for the key's TTL; the engine's own dedupe is the
 * row lock). Many specs go in batches of BATCH_SIZE; a failed call is retried with
 * backoff before the error reaches the caller, whose cells the re-drive then covers.
 * A run's cancel is one call, never retried here: the cancel outbox's drain retries it,
 * paced, and a 404 or 409 answer means the run is not running any more.
 */
import { randomUUID } from "node:crypto";
import { idempotencyKeys, TriggerClient } from "@trigger.dev/sdk";
import type { Logger } from "../config/log";
import { parseRetryAfter } from "../domain/retry-after";
import type { CancelOutcome, EnqueueSpec, TaskBackend } from "./port";

/** Carrier runs per table at once (the row-carrier task's `concurrency.perKey`). */
export const CARRIERS_PER_TABLE = 50;

/** Items per batch request (the API accepts up to 1,000 in v4). */
export const BATCH_SIZE = 500;
const ATTEMPTS = 5;
const KEY_TTL = "1h";

export interface TriggerBackendOptions {
  accessToken: string;
  /** Default: the trigger.dev cloud. */
  baseURL?: string;
  log: Logger;
  /** Backoff before retry n (1-based), in ms; tests shorten it. */
  backoffMs?: (attempt: number) => number;
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

  async enqueue(specs: EnqueueSpec[]): Promise<void> {
    if (specs.length === 0) return;
    const items = await Promise.all(specs.map((s) => this.item(s)));
    if (items.length === 1 && items[0]) {
      const item = items[0];
      await this.retrying("trigger", () =>
        this.client.tasks.trigger(item.id, item.payload, item.options, {
          retry: { maxAttempts: 1 },
        }),
      );
      return;
    }
    for (let i = 0; i < items.length; i += BATCH_SIZE) {
      const chunk = items.slice(i, i + BATCH_SIZE);
      await this.retrying("batch trigger", () =>
        this.client.batch.trigger(chunk, undefined, { retry: { maxAttempts: 1 } }),
      );
    }
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
    const idempotencyKey = await idempotencyKeys.create([spec.idempotencyKey, randomUUID()], {
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
        await new Promise((r) => setTimeout(r, this.backoff(attempt)));
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

/**
 * The rate limiter on the database every Cellflow process already shares: the default
 * when neither Upstash nor REDIS_URL is configured. The same sliding log as the Redis
 * adapters (slots.ts), kept in `rate_limit_logs`: a refusal is one read, a grant one
 * statement under the key's row lock (store/rate-limits/take.ts).
 *
 * Invariant: never fail open. A take that errors (database down, lock timeout) or does
 * not answer within TAKE_TIMEOUT_MS says "unavailable"; a slot reserved by a take that
 * answers after the timeout is not used, which only errs on the side of fewer calls.
 */
import type { Db } from "@db/client";
import { releaseSlot } from "@/store/rate-limits/release";
import { takeFromLog } from "@/store/rate-limits/take";
import type { RateLimit, RateLimiter, Slot, Take, TakeOptions } from "./port";
import { TAKE_TIMEOUT_MS, UNAVAILABLE_RETRY_MS } from "./sliding-log";
import { guardMs, horizonMs, spacingMs } from "./slots";

const UNAVAILABLE: Take = { ok: false, retryAfterMs: UNAVAILABLE_RETRY_MS, reason: "unavailable" };

const logKey = (key: string, { limit, windowMs }: RateLimit) => `${limit}/${windowMs}:${key}`;

export class PostgresLimiter implements RateLimiter {
  readonly kind = "postgres" as const;

  constructor(
    private readonly db: Db,
    private readonly timeoutMs = TAKE_TIMEOUT_MS,
  ) {}

  async take(key: string, rate: RateLimit, opts: TakeOptions = {}): Promise<Take> {
    const { limit, windowMs } = rate;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.timeoutMs);
    });
    const taken = takeFromLog(this.db, {
      key: logKey(key, rate),
      limit,
      windowMs,
      spacingMs: spacingMs(limit, windowMs),
      guardMs: guardMs(windowMs),
      reachMs: Math.max(
        0,
        Math.min(opts.maxWaitMs ?? Number.POSITIVE_INFINITY, horizonMs(windowMs)),
      ),
    });
    try {
      const outcome = await Promise.race([taken, timedOut]);
      if (outcome === "timeout") {
        // Still running: its answer (or error) goes nowhere.
        taken.catch(() => {});
        return UNAVAILABLE;
      }
      return outcome.granted
        ? { ok: true, at: outcome.atMs, waitMs: outcome.waitMs, ticket: String(outcome.atMs) }
        : { ok: false, retryAfterMs: outcome.waitMs, reason: "limited" };
    } catch {
      return UNAVAILABLE;
    } finally {
      clearTimeout(timer);
    }
  }

  async release(key: string, rate: RateLimit, slot: Slot): Promise<void> {
    await releaseSlot(this.db, logKey(key, rate), slot.at).catch(() => {});
  }

  /** The database belongs to whoever passed it in. */
  async close(): Promise<void> {}
}

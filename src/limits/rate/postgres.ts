/**
 * The rate limiter on the database every Cellflow process already shares: the default
 * when neither Upstash nor REDIS_URL is configured. Same sliding-log semantics as the
 * Redis adapters (sliding-log.ts), kept in `rate_limit_logs` and decided by one
 * statement under the key's row lock (store/rate-limits/take.ts).
 *
 * Invariant: never fail open. A take that errors (database down, lock timeout) or does
 * not answer within TAKE_TIMEOUT_MS says "unavailable"; a grant that arrives after the
 * timeout was counted but is not used, which only errs on the side of fewer calls.
 */
import type { Db } from "@db/client";
import { takeFromLog } from "@/store/rate-limits/take";
import { guardMs, spacingMs } from "./memory";
import type { RateLimit, RateLimiter, Take } from "./port";
import { TAKE_TIMEOUT_MS, UNAVAILABLE_RETRY_MS } from "./sliding-log";

const UNAVAILABLE: Take = { ok: false, retryAfterMs: UNAVAILABLE_RETRY_MS, reason: "unavailable" };

export class PostgresLimiter implements RateLimiter {
  readonly kind = "postgres" as const;

  constructor(
    private readonly db: Db,
    private readonly timeoutMs = TAKE_TIMEOUT_MS,
  ) {}

  async take(key: string, { limit, windowMs }: RateLimit): Promise<Take> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.timeoutMs);
    });
    const taken = takeFromLog(this.db, {
      key: `${limit}/${windowMs}:${key}`,
      limit,
      windowMs,
      spacingMs: spacingMs(limit, windowMs),
      guardMs: guardMs(windowMs),
    });
    try {
      const outcome = await Promise.race([taken, timedOut]);
      if (outcome === "timeout") {
        // Still running: its answer (or error) goes nowhere.
        taken.catch(() => {});
        return UNAVAILABLE;
      }
      return outcome.granted
        ? { ok: true, at: outcome.atMs }
        : { ok: false, retryAfterMs: outcome.waitMs, reason: "limited" };
    } catch {
      return UNAVAILABLE;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The database belongs to whoever passed it in. */
  async close(): Promise<void> {}
}

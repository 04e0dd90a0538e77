/**
 * The in-process rate limiter (neither Upstash nor REDIS_URL configured): the same
 * sliding log the Redis adapters run (sliding-log.ts explains the guard and the
 * spacing), per key. It limits one process only: two worker processes each allow the
 * full limit.
 */
import type { RateLimit, RateLimiter, Take } from "./port";

/** Half the even spacing: smooths bursts yet lets a late grant catch up. */
export const spacingMs = (limit: number, windowMs: number) => Math.floor(windowMs / limit / 2);
/** 1% of the window, at least 1 ms. */
export const guardMs = (windowMs: number) => Math.max(1, Math.ceil(windowMs / 100));

export class MemoryLimiter implements RateLimiter {
  readonly kind = "memory" as const;
  /** Grant times per `<limit>/<windowMs>:<key>`, oldest first. */
  private readonly logs = new Map<string, number[]>();

  constructor(private readonly now: () => number = Date.now) {}

  async take(key: string, { limit, windowMs }: RateLimit): Promise<Take> {
    const id = `${limit}/${windowMs}:${key}`;
    const t = this.now();
    const window = windowMs + guardMs(windowMs);
    const log = (this.logs.get(id) ?? []).filter((at) => at > t - window);
    this.logs.set(id, log);
    let wait = 0;
    const newest = log.at(-1);
    if (newest !== undefined) wait = newest + spacingMs(limit, windowMs) - t;
    if (log.length >= limit) wait = Math.max(wait, (log[0] ?? t) + window - t);
    if (wait > 0) return { ok: false, retryAfterMs: wait, reason: "limited" };
    log.push(t);
    return { ok: true, at: t };
  }

  async close(): Promise<void> {
    this.logs.clear();
  }
}

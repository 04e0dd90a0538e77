/**
 * The rate limiter port: one `take` per provider call, keyed per workspace and per
 * provider (`<workspaceId>:<providerId>`). Adapters: @upstash/ratelimit on Upstash
 * (UPSTASH_REDIS_REST_URL/TOKEN), the same library on a plain Redis (REDIS_URL), the
 * same sliding log in Postgres (the default), or an in-process limiter (one process only,
 * RATE_LIMITER=memory). Invariant: never fail open in front of a paid
 * provider — a limiter that cannot answer (timeout, Redis down) says "not now".
 */
export type Take =
  | {
      ok: true;
      /** When the limiter counted the grant (epoch ms, its own clock): what tests measure. */
      at?: number;
    }
  /** Not now: try again after `retryAfterMs` (the window's reset, or a backoff guess). */
  | { ok: false; retryAfterMs: number; reason: "limited" | "unavailable" };

export interface RateLimit {
  /** Calls allowed per window. */
  limit: number;
  windowMs: number;
}

export interface RateLimiter {
  readonly kind: "upstash" | "redis" | "postgres" | "memory";
  take(key: string, limit: RateLimit): Promise<Take>;
  close(): Promise<void>;
}

/**
 * Why `kind` cannot pace calls made from many processes at once (trigger.dev runs, each
 * its own process), or undefined when it can: only the in-process limiter cannot.
 */
export function sharedLimiterRefusal(kind: RateLimiter["kind"]): string | undefined {
  return kind === "memory"
    ? "RATE_LIMITER=memory cannot limit calls across trigger.dev runs: use postgres (default), redis or upstash"
    : undefined;
}

/**
 * The rate limiter port: one `take` per provider call, keyed per workspace and per
 * provider (`<workspaceId>:<providerId>`). Adapters: @upstash/ratelimit on Upstash
 * (UPSTASH_REDIS_REST_URL/TOKEN), the same library on a plain Redis (REDIS_URL), the
 * same sliding log in Postgres (the default), or an in-process limiter (one process only,
 * RATE_LIMITER=memory). All keep the log slots.ts describes: a take reserves the call's
 * turn (now, or a slot ahead), so callers in many processes go in the order they asked.
 * Invariant: never fail open in front of a paid provider — a limiter that cannot answer
 * (timeout, Redis down) says "not now", and a slot is waited for on the limiter's clock.
 */

/** A call's turn, reserved by the limiter. */
export interface Slot {
  /** When the call may go (epoch ms, the limiter's clock): what tests measure. */
  at: number;
  /**
   * How long after the limiter's answer that is (0: now). Counted by the limiter from its
   * own clock, so a caller whose clock differs never goes early.
   */
  waitMs: number;
  /** What `release` needs to find the slot again. */
  ticket: string;
}

export type Take =
  | ({ ok: true } & Slot)
  /** Not now: try again after `retryAfterMs` (when a slot comes in reach, or a backoff guess). */
  | { ok: false; retryAfterMs: number; reason: "limited" | "unavailable" };

export interface RateLimit {
  /** Calls allowed per window. */
  limit: number;
  windowMs: number;
}

export interface TakeOptions {
  /**
   * The latest the caller can use a slot, in ms from now (its deadline): a slot farther
   * ahead is refused, not reserved for a call that will not be made. At most the horizon.
   */
  maxWaitMs?: number;
}

export interface RateLimiter {
  readonly kind: "upstash" | "redis" | "postgres" | "memory";
  take(key: string, limit: RateLimit, opts?: TakeOptions): Promise<Take>;
  /**
   * Gives back a slot whose call will not be made (its attempt stopped or timed out
   * first). Best effort, never throws: a slot not given back is only a call unused.
   */
  release(key: string, limit: RateLimit, slot: Slot): Promise<void>;
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

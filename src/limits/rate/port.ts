/**
 * The rate limiter port: one `take` per provider call, keyed per workspace and per
 * provider (`<workspaceId>:<providerId>`). Adapters: @upstash/ratelimit on Upstash
 * (UPSTASH_REDIS_REST_URL/TOKEN), the same library on a plain Redis (REDIS_URL), the
 * same sliding log in Postgres (the default), or an in-process limiter (one process only,
 * RATE_LIMITER=memory). All keep the log slots.ts describes: a take reserves the call's
 * turn (now, or a slot ahead), so callers in many processes go in the order they asked.
 * Invariant: never fail open in front of a paid provider — a limiter that cannot answer
 * (timeout, Redis down) says "not now", and a slot is waited for on the limiter's clock.
 *
 * A weighted limit (`weightLimit`, an llm model's tokens per minute) keeps a weighted log:
 * each entry counts once against `limit` and its weight against `weightLimit`, and a take
 * carries its weight (the call's reservation). `settle` replaces an entry's weight with
 * what the call used — on every adapter the entry itself is rewritten (Postgres, Redis and
 * Upstash in their stores, under the key's lock or in one script; memory in its map), so
 * unused reserved weight is free again at once and an excess is counted where the call
 * went. `coolDown` holds a key for every process (a provider's 429): a take on a cooling
 * key gets no slot before the cool-down ends.
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
  /** A weighted log's entry: the weight it was taken with. */
  weight?: number;
}

export type Take =
  | ({ ok: true } & Slot)
  /** Not now: try again after `retryAfterMs` (when a slot comes in reach, or a backoff guess). */
  | { ok: false; retryAfterMs: number; reason: "limited" | "unavailable" };

export interface RateLimit {
  /** Calls allowed per window. */
  limit: number;
  windowMs: number;
  /** Weight (tokens) allowed per window over the calls' weights; absent: calls only. */
  weightLimit?: number;
}

export interface TakeOptions {
  /**
   * The latest the caller can use a slot, in ms from now (its deadline): a slot farther
   * ahead is refused, not reserved for a call that will not be made. At most the horizon.
   */
  maxWaitMs?: number;
  /**
   * With a `weightLimit`: what this call weighs (its reservation), from 0 up to the weight
   * limit (a heavier call could never go: the adapters throw a RangeError). Default 1.
   */
  weight?: number;
  /**
   * With a `weightLimit`: the most any one entry (this call's too) counts in a part of the
   * window (slots.ts `partWeight`), what calls on the key really use; the whole window
   * counts every entry in full. Default: no cap.
   */
  partCap?: number;
}

export interface RateLimiter {
  readonly kind: "upstash" | "redis" | "postgres" | "memory";
  take(key: string, limit: RateLimit, opts?: TakeOptions): Promise<Take>;
  /**
   * Gives back a slot whose call will not be made (its attempt stopped or timed out
   * first). Best effort, never throws: a slot not given back is only a call unused.
   */
  release(key: string, limit: RateLimit, slot: Slot): Promise<void>;
  /**
   * A weighted slot's call answered having used `weight`: its entry weighs that from now
   * on (the calls after it may use what it did not). Best effort, never throws: a settle
   * lost leaves the reservation counted, fewer calls rather than more.
   */
  settle(key: string, limit: RateLimit, slot: Slot, weight: number): Promise<void>;
  /**
   * Holds `key` (whatever its limit) for `ms` from now on the limiter's clock, for every
   * process: a later take gets no slot before then. A longer cool-down already set stays.
   */
  coolDown(key: string, ms: number): Promise<void>;
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

/**
 * Pacing: an attempt that a rate limit turns away waits in place — holding its dispatch
 * window slot, not going back to the queue — and asks again, up to a budget of takes.
 *
 * Invariants:
 * - No lockstep: waiters on a key hear the same `retryAfterMs` (when the oldest grant
 *   leaves the window), so each adds its own jitter, growing exponentially with repeated
 *   refusals; a limiter that cannot answer is backed off with full-jitter exponential
 *   delays.
 * - A Stop lands mid-wait: the attempt's AbortSignal ends the wait at once (rejecting
 *   with the signal's reason), and `isStopped` (the caller's tombstone check, for a Stop
 *   whose notice did not reach this process) is asked at least every `stopCheckMs`.
 * - "unavailable" (limiter down or slow) is waited out like "limited": never fail open.
 * - After `attempts` refusals: `RateLimitExceeded`, whose message the cell shows.
 */

import { sleep } from "@/domain/sleep";
import { CancelledError, RateLimitExceeded } from "@/errors";
import type { RateLimit, RateLimiter } from "./port";

export interface PaceOptions {
  signal?: AbortSignal;
  /** Takes before giving up. Default 8. */
  attempts?: number;
  /** First backoff ceiling and the jitter added to a `retryAfterMs`. Default 100 ms. */
  baseMs?: number;
  /** Largest backoff ceiling (a longer `retryAfterMs` is still honoured). Default 5 s. */
  maxMs?: number;
  /** Whether the cell was stopped meanwhile (a DB tombstone check). */
  isStopped?: () => Promise<boolean>;
  /** How often `isStopped` is asked during a long wait. Default 1 s. */
  stopCheckMs?: number;
  random?: () => number;
}

/**
 * The wait after the `attempt`-th refusal (0-based).
 * - "limited": the limiter said when a call frees up; wait that plus a jitter of up to
 *   `baseMs · 2^attempt`, capped at 4 × `baseMs`. Longer only leaves freed calls unused
 *   while another waiter takes them: a full exponential backoff here cost W5 a tenth of
 *   its rate and made the unluckiest waiters wait seconds longer than the rest.
 * - "unavailable": nothing is known; at least `retryAfterMs` plus up to `baseMs`, or a
 *   full-jitter exponential backoff up to `maxMs` when that is longer.
 */
export function backoffMs(
  attempt: number,
  refusal: { retryAfterMs: number; reason: "limited" | "unavailable" },
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const { retryAfterMs, reason } = refusal;
  if (reason === "limited") return retryAfterMs + random() * baseMs * Math.min(4, 2 ** attempt);
  const ceiling = Math.min(maxMs, baseMs * 2 ** attempt);
  return Math.max(retryAfterMs + random() * baseMs, random() * ceiling);
}

/**
 * Resolves once `key` may call its provider, with when the limiter counted the grant
 * (its clock, epoch ms); see the header for what else it does.
 */
export async function pace(
  limiter: RateLimiter,
  key: string,
  limit: RateLimit,
  opts: PaceOptions = {},
): Promise<number> {
  const attempts = opts.attempts ?? 8;
  const baseMs = opts.baseMs ?? 100;
  const maxMs = opts.maxMs ?? 5_000;
  const random = opts.random ?? Math.random;
  for (let attempt = 0; ; attempt++) {
    opts.signal?.throwIfAborted();
    const coolingMs = (coolDowns.get(key) ?? 0) - Date.now();
    if (coolingMs > 0) await wait(coolingMs + random() * baseMs, opts);
    const take = await limiter.take(key, limit);
    if (take.ok) return take.at ?? Date.now();
    if (attempt + 1 >= attempts) throw new RateLimitExceeded(key, take.reason);
    await wait(backoffMs(attempt, take, baseMs, maxMs, random), opts);
  }
}

/** Provider-imposed pauses per key, this process only: epoch ms before which to wait. */
const coolDowns = new Map<string, number>();

/**
 * Honours a provider's own 429 `Retry-After` for every later `pace` on `key` in this
 * process (the failing call's own retry already waits it: BlockError.retryAfterMs).
 * Other processes learn it from their own 429s.
 */
export function coolDown(key: string, retryAfterMs: number): void {
  const until = Date.now() + retryAfterMs;
  if ((coolDowns.get(key) ?? 0) < until) coolDowns.set(key, until);
  // Forget the expired ones so the map stays the size of the keys cooling right now.
  if (coolDowns.size > 1_000) {
    const now = Date.now();
    for (const [k, at] of coolDowns) if (at <= now) coolDowns.delete(k);
  }
}

/** Sleeps `ms`, in slices of `stopCheckMs` between which `isStopped` is asked. */
async function wait(ms: number, opts: PaceOptions): Promise<void> {
  const slice = opts.isStopped ? (opts.stopCheckMs ?? 1_000) : ms;
  const end = Date.now() + ms;
  for (let left = ms; left > 0; left = end - Date.now()) {
    await sleep(Math.min(left, slice), opts.signal);
    if (opts.isStopped && (await opts.isStopped())) throw new CancelledError();
  }
}

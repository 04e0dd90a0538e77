/**
 * Pacing: a call waits its turn at the shared limiter — its attempt keeping its dispatch
 * window slot, not going back to the queue — for as long as its attempt lives. The budget
 * is time, not a count of refusals: the wait ends when the call's slot comes, or when the
 * attempt ends (its deadline or a Stop, through its signal or the tombstone).
 *
 * Invariants:
 * - A call goes at its slot, counted on the limiter's clock (`waitMs`), never earlier.
 * - Never fail open: "unavailable" (limiter down or slow) is waited out like "limited",
 *   asked again with full-jitter exponential backoff until the attempt ends.
 * - A Stop lands mid-wait: the signal ends it at once, rejecting with the signal's reason
 *   (a DeadlineError at the deadline, so the cell shows the deadline's message);
 *   `isStopped` (the caller's tombstone check, for a Stop whose notice did not reach this
 *   process) is asked every `stopCheckMs` of waiting, not at every answer.
 * - A slot whose call will not be made (the attempt ended while waiting for it) is given
 *   back to the limiter.
 * - No slot past `deadlineAt` is reserved: the limiter refuses it (a read), and the call
 *   waits for a nearer one or for its deadline.
 * - A call heavier than its weighted limit allows in a whole window never waits: it is
 *   refused at once (OverRateLimit), since no wait could let it go.
 */

import { sleep } from "@/domain/sleep";
import { CancelledError, OverRateLimit } from "@/errors";
import type { RateLimit, RateLimiter, Slot, Take, TakeOptions } from "./port";

export interface PaceOptions {
  /** The attempt's: its deadline and a Stop abort it. */
  signal?: AbortSignal;
  /** When the attempt's deadline passes (epoch ms): no slot later than that is reserved. */
  deadlineAt?: number;
  /** The jitter added to a refusal's `retryAfterMs`, and the first backoff ceiling. Default 100 ms. */
  baseMs?: number;
  /** Largest backoff ceiling while the limiter cannot answer. Default 5 s. */
  maxMs?: number;
  /** Whether the cell was stopped meanwhile (a DB tombstone check). */
  isStopped?: () => Promise<boolean>;
  /** How often `isStopped` is asked while waiting. Default 1 s. */
  stopCheckMs?: number;
  random?: () => number;
  /** The process's provider-imposed pauses (a 429's `Retry-After`), waited before a take. */
  coolDowns?: CoolDowns;
  /**
   * The farthest ahead a slot may be reserved (ms from now; default the limiter's horizon).
   * A weighted log (llm tokens) sets it short: a slot computed while calls in flight still
   * hold their whole reservation lies far ahead, and reserving it would keep the call
   * waiting there after those calls settle and give most of it back.
   */
  reachMs?: number;
  /** The longest wait after a "limited" refusal before asking again (default: as long as the limiter says). */
  pollMs?: number;
  /** At a weighted limit: what the call weighs (TakeOptions.weight). */
  weight?: number;
  /** At a weighted limit: the most an entry counts in a part of the window (TakeOptions.partCap). */
  partCap?: number;
}

/**
 * The wait after the `attempt`-th refusal (0-based).
 * - "limited": the limiter said when a slot comes in reach; that plus a jitter of up to
 *   `baseMs`, so waiters of several processes do not ask in lockstep.
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
  if (reason === "limited") return retryAfterMs + random() * baseMs;
  const ceiling = Math.min(maxMs, baseMs * 2 ** attempt);
  return Math.max(retryAfterMs + random() * baseMs, random() * ceiling);
}

/** A tombstone check asked at most every `stopCheckMs`: throws CancelledError once stopped. */
export type StopCheck = () => Promise<void>;

export function stopCheck(opts: PaceOptions): StopCheck {
  const every = opts.stopCheckMs ?? 1_000;
  let last = Date.now();
  return async () => {
    if (!opts.isStopped || Date.now() - last < every) return;
    last = Date.now();
    if (await opts.isStopped()) throw new CancelledError();
  };
}

function takeOptions(opts: PaceOptions): TakeOptions {
  const untilDeadline =
    opts.deadlineAt === undefined ? undefined : Math.max(0, opts.deadlineAt - Date.now());
  const maxWaitMs =
    opts.reachMs === undefined
      ? untilDeadline
      : Math.min(untilDeadline ?? Number.POSITIVE_INFINITY, opts.reachMs);
  return {
    ...(maxWaitMs === undefined ? {} : { maxWaitMs }),
    ...(opts.weight === undefined ? {} : { weight: opts.weight }),
    ...(opts.partCap === undefined ? {} : { partCap: opts.partCap }),
  };
}

/** Throws OverRateLimit for a call heavier than `limit` allows in a whole window. */
export function assertCanGo(limit: RateLimit, opts: PaceOptions): void {
  const weight = opts.weight ?? 1;
  if (limit.weightLimit !== undefined && weight > limit.weightLimit) {
    throw new OverRateLimit(
      `a call weighing ${weight} can never go under a limit of ${limit.weightLimit} per ${limit.windowMs / 1000} s`,
    );
  }
}

/**
 * Asks the limiter until it reserves a slot for a call on `key`; rejects only when the
 * attempt ends (the signal's reason, or CancelledError from the tombstone).
 */
export async function reserve(
  limiter: RateLimiter,
  key: string,
  limit: RateLimit,
  opts: PaceOptions = {},
  check: StopCheck = stopCheck(opts),
): Promise<Slot> {
  const baseMs = opts.baseMs ?? 100;
  const maxMs = opts.maxMs ?? 5_000;
  const random = opts.random ?? Math.random;
  assertCanGo(limit, opts);
  for (let attempt = 0; ; attempt++) {
    opts.signal?.throwIfAborted();
    const coolingMs = (opts.coolDowns?.until(key) ?? 0) - Date.now();
    if (coolingMs > 0) await wait(coolingMs + random() * baseMs, opts, check);
    const take = await takeUnlessStopped(limiter, key, limit, opts);
    if (take.ok) {
      const { ok: _, ...slot } = take;
      return slot;
    }
    const backoff = backoffMs(attempt, take, baseMs, maxMs, random);
    const polled =
      take.reason === "limited" && opts.pollMs !== undefined
        ? Math.min(backoff, opts.pollMs + random() * baseMs)
        : backoff;
    await wait(polled, opts, check);
  }
}

/**
 * One take, given up at once when the signal aborts while it is out (a poll under load can
 * take a while; a Stop must not wait for it). A slot it reserves after that is given back.
 */
async function takeUnlessStopped(
  limiter: RateLimiter,
  key: string,
  limit: RateLimit,
  opts: PaceOptions,
): Promise<Take> {
  const taking = limiter.take(key, limit, takeOptions(opts));
  const signal = opts.signal;
  if (!signal) return taking;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([taking, aborted]);
  } catch (err) {
    if (signal.aborted) {
      void taking.then(
        (late) => {
          if (late.ok) {
            const { ok: _, ...slot } = late;
            void limiter.release(key, limit, slot).catch(() => {});
          }
        },
        () => {},
      );
    }
    throw err;
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}

/**
 * Waits for a reserved slot; resolves with its time (the limiter's clock, epoch ms). When
 * the attempt ends first, gives the slot back and rejects like `reserve`.
 */
export async function awaitSlot(
  limiter: RateLimiter,
  key: string,
  limit: RateLimit,
  slot: Slot,
  opts: PaceOptions = {},
  check: StopCheck = stopCheck(opts),
): Promise<number> {
  try {
    opts.signal?.throwIfAborted();
    await wait(slot.waitMs, opts, check);
  } catch (err) {
    void limiter.release(key, limit, slot).catch(() => {});
    throw err;
  }
  return slot.at;
}

/**
 * Resolves once `key` may call its provider, with the time of its slot (the limiter's
 * clock, epoch ms); see the header for what else it does.
 */
export async function pace(
  limiter: RateLimiter,
  key: string,
  limit: RateLimit,
  opts: PaceOptions = {},
): Promise<number> {
  const check = stopCheck(opts);
  const slot = await reserve(limiter, key, limit, opts, check);
  return awaitSlot(limiter, key, limit, slot, opts, check);
}

/**
 * Provider-imposed pauses per key, this process only: epoch ms before which to wait.
 * Honours a provider's own 429 `Retry-After` for every later `pace` on `key` given these
 * (the failing call's own retry already waits it: BlockError.retryAfterMs). Other
 * processes learn it from their own 429s.
 */
export class CoolDowns {
  private readonly ends = new Map<string, number>();

  until(key: string): number | undefined {
    return this.ends.get(key);
  }

  coolDown(key: string, retryAfterMs: number): void {
    const until = Date.now() + retryAfterMs;
    if ((this.ends.get(key) ?? 0) < until) this.ends.set(key, until);
    // Forget the expired ones so the map stays the size of the keys cooling right now.
    if (this.ends.size > 1_000) {
      const now = Date.now();
      for (const [k, at] of this.ends) if (at <= now) this.ends.delete(k);
    }
  }
}

/** Sleeps `ms`, in slices of `stopCheckMs` after which the tombstone check may ask. */
async function wait(ms: number, opts: PaceOptions, check: StopCheck): Promise<void> {
  const slice = opts.isStopped ? (opts.stopCheckMs ?? 1_000) : ms;
  const end = Date.now() + ms;
  for (let left = ms; left > 0; left = end - Date.now()) {
    await sleep(Math.min(left, slice), opts.signal);
    await check();
  }
}

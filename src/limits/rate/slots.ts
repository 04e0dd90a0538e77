/**
 * The sliding log every limiter keeps (Redis and Upstash in a Lua script, Postgres in
 * `cellflow_rate_take`, the in-process limiter here): one entry per call, at the time the
 * call may go — now, or a slot reserved for it ahead. A take appends the earliest time
 * after the log's newest entry that keeps both rules:
 * - no span of `windowMs + guardMs` holds more than `limit` entries. Why the guard: a
 *   provider counts arrivals, which reach it with jittered latency — a window a hair
 *   longer than its own keeps our calls inside its limit too;
 * - entries are at least `spacingMs` apart. Why: without it a full window's worth goes at
 *   once and expires at once, a burst every window that lands on the provider as one.
 * Why reserve instead of refusing: callers in many processes then wait their turn in the
 * order they asked (one write each), instead of waking together at every freed call and
 * drawing lots for it (a refusal each, per freed call, and a tail of unlucky waiters).
 * A slot is reserved at most `reachMs` ahead (the horizon, or less when the caller's
 * deadline is nearer): farther, the take is refused without a write, with how long until
 * the slot would be in reach.
 */

/** Half the even spacing: smooths bursts yet lets a late call catch up. */
export const spacingMs = (limit: number, windowMs: number) => Math.floor(windowMs / limit / 2);
/** 1% of the window, at least 1 ms. */
export const guardMs = (windowMs: number) => Math.max(1, Math.ceil(windowMs / 100));
/**
 * How far ahead a slot may be reserved: well past any line a window of cells forms at a
 * plan's rate, and short of any attempt's deadline, so a reserved slot is one its call
 * lives to use (a process that dies holding one only leaves that call unused).
 */
export const horizonMs = (windowMs: number) => Math.max(windowMs, 30_000);

/**
 * The time the next call on a log may go: the earliest at or after `now`, after the
 * newest entry, that keeps both rules. `log` holds the entries younger than the span
 * (`windowMs + guardMs`), oldest first.
 */
export function nextSlot(
  log: readonly number[],
  now: number,
  limit: number,
  spanMs: number,
  spacing: number,
): number {
  let slot = now;
  const newest = log.at(-1);
  if (newest !== undefined) slot = Math.max(slot, newest + spacing);
  // With `limit` entries inside the span before it, the slot waits for the oldest of them
  // to leave: the limit-th newest.
  const kth = log.length >= limit ? log[log.length - limit] : undefined;
  if (kth !== undefined) slot = Math.max(slot, kth + spanMs);
  return slot;
}

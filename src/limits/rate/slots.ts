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

/** One entry of a weighted log: when its call may go, and what it weighs (its tokens). */
export interface WeightedEntry {
  at: number;
  weight: number;
}

/** A weighted log's rules: `limit` calls and `weightLimit` weight per span. */
export interface WeightedRules {
  limit: number;
  weightLimit: number;
  spanMs: number;
  spacing: number;
  /** The most weight reserved ahead of now at once (aheadWeight of the part's limit). */
  aheadLimit: number;
  /** A provider's cool-down on the key (epoch ms, the limiter's clock): no slot before it. */
  coolUntil: number;
  /** The most one entry counts in a part of the span (`partWeight`); default: its weight. */
  partCap?: number;
}

/**
 * How many parts of its span a weighted log's weight is spread over: no sixth of the span
 * holds more than a sixth of the weight limit (or the one call, when it weighs more).
 * Why: without it the window's whole weight goes in a burst as soon as it is free — the
 * settled calls fill a minute's tokens in seconds, then nothing goes until they leave it
 * — so a run's tokens per minute overshoot the limit in its first minute and starve after;
 * a sixth keeps the pace within about 2 % of even at any time. (Spacing by weight would
 * not do: a reservation is not what the call uses.)
 */
export const WEIGHT_PARTS = 6;
export const partSpanMs = (spanMs: number) => Math.ceil(spanMs / WEIGHT_PARTS);
export const partLimit = (weightLimit: number, weight: number) =>
  Math.max(Math.floor(weightLimit / WEIGHT_PARTS), weight);
/**
 * What an entry of `weight` counts in a part of the span, given the caller's `partCap`:
 * what calls on the key have really used of late (llm.ts), or no cap. Why: an entry in
 * flight still weighs its whole reservation (prompt + maxTokens, ten times what a short
 * answer uses), and a part is a sixth of the limit, so a few calls in flight would hold
 * most of it and the pace would fall to half the limit with a second of model latency.
 * The part is our own smoothing, not the provider's limit: there an entry counts at what
 * its call is expected to use, while the whole span keeps counting every reservation in
 * full (the limit itself; a provider such as Anthropic counts `max_tokens` in flight too).
 */
export const partWeight = (weight: number, partCap?: number) =>
  partCap === undefined ? weight : Math.min(weight, Math.max(0, partCap));

/**
 * The most weight a weighted log reserves ahead of now: 2 % of a part's limit. Why: a
 * slot ahead is placed counting every reservation ahead of it at its full weight (input
 * plus `maxTokens`), and most of that is given back when the calls settle with their real
 * usage — too late for the slots already placed. Bounding what is reserved ahead bounds
 * that waste, so settled usage can fill the rest; the calls beyond it wait in their
 * process's line and ask again when the nearest reserved slot has come (a read each). At
 * least one call may always be reserved ahead, whatever it weighs.
 */
export const aheadWeight = (weightLimit: number) =>
  Math.max(1, Math.floor(weightLimit / WEIGHT_PARTS / 50));

/** The slot after which the oldest entries have left `spanMs` enough for `weight` under `cap`. */
function roomFor(
  log: readonly WeightedEntry[],
  slot: number,
  weight: number,
  cap: number,
  spanMs: number,
  entryCap?: number,
): number {
  const w = (e: WeightedEntry) => partWeight(e.weight, entryCap);
  let total = log.reduce((sum, e) => sum + w(e), 0);
  for (const e of log) {
    if (total + weight <= cap) break;
    total -= w(e);
    slot = Math.max(slot, e.at + spanMs);
  }
  return slot;
}

/**
 * The next slot of a weighted log for a call of `weight` (at most `weightLimit`), and how
 * long until the reservations ahead leave room for it (0: room now). `log` holds the
 * entries younger than the span, oldest first. The slot keeps the call rules of
 * `nextSlot` and: no span holds more than `weightLimit` in all, nor a part of it more than
 * its share (WEIGHT_PARTS, each entry counted at `partWeight`); no slot before `coolUntil`.
 */
export function nextWeightedSlot(
  log: readonly WeightedEntry[],
  now: number,
  weight: number,
  r: WeightedRules,
): { slot: number; aheadWaitMs: number } {
  let slot = Math.max(
    nextSlot(
      log.map((e) => e.at),
      now,
      r.limit,
      r.spanMs,
      r.spacing,
    ),
    r.coolUntil,
  );
  slot = roomFor(log, slot, weight, r.weightLimit, r.spanMs);
  const inPart = partWeight(weight, r.partCap);
  slot = roomFor(
    log,
    slot,
    inPart,
    partLimit(r.weightLimit, inPart),
    partSpanMs(r.spanMs),
    r.partCap,
  );
  let ahead = log.reduce((sum, e) => sum + (e.at > now ? e.weight : 0), 0);
  let aheadWaitMs = 0;
  if (ahead > 0 && ahead + weight > r.aheadLimit) {
    // Room comes as the nearest reserved slots come.
    for (const e of log) {
      if (e.at <= now) continue;
      ahead -= e.weight;
      aheadWaitMs = e.at - now;
      if (ahead === 0 || ahead + weight <= r.aheadLimit) break;
    }
  }
  return { slot, aheadWaitMs };
}

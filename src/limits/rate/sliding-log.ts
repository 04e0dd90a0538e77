/**
 * The limiter both Redis-backed adapters run: `@upstash/ratelimit`'s `Ratelimit` (its
 * timeout, prefix and key layout) with the sliding log of slots.ts plugged in as its
 * `limiter`, in one Lua script. Why not the built-in algorithms: `slidingWindow` weighs
 * the previous window's count, and `fixedWindow`/`tokenBucket` refill on a grid, so all
 * three let limit + 1 (up to 2 × limit) calls through some window of `windowMs`; and none
 * reserves a turn, so waiters in many processes would draw lots for every freed call. The
 * log keeps one entry per call, at the time it may go, stamped by Redis's own clock (one
 * clock for every process).
 *
 * A weighted limit (an llm model's tokens) runs WEIGHTED_LOG_SCRIPT: each entry's member
 * carries its weight (`<uuid>:<weight>`), passed in as the library's `rate`. On both Redis
 * and Upstash the entries are ours to rewrite, so `settle` replaces the entry's member
 * with one weighing what the call used (unused tokens are free again at once; an excess
 * is counted at the call's slot), in one script; `coolDown` sets a key with PX that every
 * weighted take reads in its script.
 *
 * Invariant: never fail open. The library's timeout resolves `success: true` with
 * reason "timeout"; that, and any error (Redis down, script error), answer "unavailable".
 */
import { createHash, randomUUID } from "node:crypto";
import { type Algorithm, Ratelimit } from "@upstash/ratelimit";
import type { Redis } from "@upstash/redis";
import type { RateLimit, RateLimiter, Slot, Take, TakeOptions } from "./port";
import {
  aheadWeight,
  guardMs,
  horizonMs,
  partLimit,
  partSpanMs,
  partWeight,
  spacingMs,
} from "./slots";

type RegionContext = Parameters<
  ReturnType<Algorithm<{ redis: Redis; prefix: string }>>["limit"]
>[0];

/**
 * KEYS[1] the log; ARGV: limit, windowMs, a unique member, spacingMs, guardMs, reachMs.
 * Reserves the next slot (slots.ts) when it is at most reachMs ahead:
 * {1, ms until the slot, the slot (Redis's clock)}; else {0, ms until it is in reach},
 * having written nothing (a refusal is a read). No `#!lua` shebang: stock Redis 7.0
 * rejects the flags @upstash/ratelimit's own scripts declare.
 */
export const SLIDING_LOG_SCRIPT = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local span = tonumber(ARGV[2]) + tonumber(ARGV[5])
local spacing = tonumber(ARGV[4])
local reach = tonumber(ARGV[6])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local slot = now
local newest = redis.call("ZRANGE", key, -1, -1, "WITHSCORES")
if newest[2] then
  slot = math.max(slot, tonumber(newest[2]) + spacing)
end
if redis.call("ZCOUNT", key, string.format("(%d", now - span), "+inf") >= limit then
  local kth = redis.call("ZRANGE", key, -limit, -limit, "WITHSCORES")
  slot = math.max(slot, tonumber(kth[2]) + span)
end
if slot - now > reach then
  return {0, slot - now - reach}
end
redis.call("ZREMRANGEBYSCORE", key, "-inf", now - span)
redis.call("ZADD", key, slot, ARGV[3])
redis.call("PEXPIRE", key, slot - now + span)
return {1, slot - now, slot}
`;

/**
 * The weighted log (slots.ts `nextWeightedSlot`): KEYS[1] the log, whose members are
 * `<uuid>:<weight>`; KEYS[2] the key's cool-down (epoch ms, absent when none). ARGV: limit,
 * windowMs, a unique id, spacingMs, guardMs, reachMs, weightLimit, weight, aheadLimit,
 * partSpanMs, partLimit, partCap (the most an entry counts in a part; empty: no cap).
 * Answers as SLIDING_LOG_SCRIPT; a refusal (out of reach, or too much reserved ahead) is a
 * read.
 */
export const WEIGHTED_LOG_SCRIPT = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local span = tonumber(ARGV[2]) + tonumber(ARGV[5])
local spacing = tonumber(ARGV[4])
local reach = tonumber(ARGV[6])
local wlimit = tonumber(ARGV[7])
local weight = tonumber(ARGV[8])
local aheadLimit = tonumber(ARGV[9])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local log = redis.call("ZRANGEBYSCORE", key, string.format("(%d", now - span), "+inf", "WITHSCORES")
local n = #log / 2
local ats, ws = {}, {}
local ahead = 0
for i = 1, n do
  ats[i] = tonumber(log[2 * i])
  ws[i] = tonumber(string.match(log[2 * i - 1], ":(%d+)$")) or 1
  if ats[i] > now then ahead = ahead + ws[i] end
end
local slot = now
local cool = redis.call("GET", KEYS[2])
if cool then slot = math.max(slot, tonumber(cool)) end
if n > 0 then slot = math.max(slot, ats[n] + spacing) end
if n >= limit then slot = math.max(slot, ats[n - limit + 1] + span) end
local function room(cap, within, w, entryCap)
  local function counted(x) if entryCap then return math.min(x, entryCap) end return x end
  local left = 0
  for i = 1, n do left = left + counted(ws[i]) end
  local k = 1
  while left + w > cap and k <= n do
    left = left - counted(ws[k])
    slot = math.max(slot, ats[k] + within)
    k = k + 1
  end
end
local partCap = tonumber(ARGV[12])
room(wlimit, span, weight, nil)
room(tonumber(ARGV[11]), tonumber(ARGV[10]), partCap and math.min(weight, partCap) or weight, partCap)
local aheadWait = 0
if ahead > 0 and ahead + weight > aheadLimit then
  for j = 1, n do
    if ats[j] > now then
      ahead = ahead - ws[j]
      aheadWait = ats[j] - now
      if ahead == 0 or ahead + weight <= aheadLimit then break end
    end
  end
end
if slot - now > reach or aheadWait > 0 then
  return {0, math.max(1, slot - now - reach, aheadWait)}
end
redis.call("ZREMRANGEBYSCORE", key, "-inf", now - span)
redis.call("ZADD", key, slot, ARGV[3] .. ":" .. ARGV[8])
redis.call("PEXPIRE", key, slot - now + span)
return {1, slot - now, slot}
`;

/** KEYS[1] a weighted log; ARGV: the entry's member, the member it becomes (same slot). */
const SETTLE_SCRIPT = `
local at = redis.call("ZSCORE", KEYS[1], ARGV[1])
if not at then return 0 end
redis.call("ZREM", KEYS[1], ARGV[1])
redis.call("ZADD", KEYS[1], at, ARGV[2])
return 1
`;

/** KEYS[1] a cool-down; ARGV[1] its length (ms): set unless a longer one is, on Redis's clock. */
const COOL_DOWN_SCRIPT = `
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local untilMs = now + tonumber(ARGV[1])
local current = tonumber(redis.call("GET", KEYS[1]) or "0")
if current < untilMs then
  redis.call("SET", KEYS[1], string.format("%d", untilMs), "PX", ARGV[1])
end
return 1
`;

const sha1 = (script: string) => createHash("sha1").update(script).digest("hex");
const SCRIPTS = {
  plain: { text: SLIDING_LOG_SCRIPT, sha: sha1(SLIDING_LOG_SCRIPT) },
  weighted: { text: WEIGHTED_LOG_SCRIPT, sha: sha1(WEIGHTED_LOG_SCRIPT) },
};
type Script = (typeof SCRIPTS)[keyof typeof SCRIPTS];

/** How long one `take` may take before it answers "unavailable". */
export const TAKE_TIMEOUT_MS = 2_000;
/** What "unavailable" asks the caller to wait before asking again. */
export const UNAVAILABLE_RETRY_MS = 500;

async function evalLog(
  ctx: RegionContext,
  script: Script,
  keys: string[],
  args: (string | number)[],
) {
  try {
    return await ctx.redis.evalsha<(string | number)[], [number, number, number?]>(
      script.sha,
      keys,
      args,
    );
  } catch (err) {
    if (!String(err).includes("NOSCRIPT")) throw err;
    return await ctx.redis.eval<(string | number)[], [number, number, number?]>(
      script.text,
      keys,
      args,
    );
  }
}

/** A weighted log's extra arguments: its weight limit, its cool-down's key, its part cap. */
interface Weighing {
  weightLimit: number;
  coolKey: string;
  partCap: number | undefined;
}

/** The log as a `Ratelimit` algorithm; a grant's slot rides back on the response. */
function slidingLog(
  limit: number,
  windowMs: number,
  reachMs: number,
  id: string,
  weighing?: Weighing,
): Algorithm<RegionContext> {
  return () => ({
    async limit(ctx, identifier, rate = 1) {
      const args = [
        limit,
        windowMs,
        id,
        spacingMs(limit, windowMs),
        guardMs(windowMs),
        Math.round(reachMs),
      ];
      const [granted, wait, at] = weighing
        ? await evalLog(
            ctx,
            SCRIPTS.weighted,
            [identifier, weighing.coolKey],
            [
              ...args,
              weighing.weightLimit,
              rate,
              aheadWeight(weighing.weightLimit),
              partSpanMs(windowMs + guardMs(windowMs)),
              partLimit(weighing.weightLimit, partWeight(rate, weighing.partCap)),
              weighing.partCap ?? "",
            ],
          )
        : await evalLog(ctx, SCRIPTS.plain, [identifier], args);
      const member = weighing ? `${id}:${rate}` : id;
      const ok = Number(granted) === 1;
      const waitMs = Math.max(ok ? 0 : 1, Number(wait));
      return {
        success: ok,
        limit,
        remaining: 0,
        reset: ok ? Number(at) : Date.now() + waitMs,
        pending: Promise.resolve(),
        slot: ok
          ? { at: Number(at), waitMs, ticket: member, ...(weighing ? { weight: rate } : {}) }
          : undefined,
        retryAfterMs: waitMs,
      };
    },
    async getRemaining() {
      throw new Error("not used by Cellflow");
    },
    async resetTokens(ctx, identifier) {
      await ctx.redis.del(identifier);
    },
  });
}

/** A `RateLimiter` over one `@upstash/redis` client. */
export class SlidingLogLimiter implements RateLimiter {
  constructor(
    readonly kind: "upstash" | "redis",
    private readonly redis: Redis,
    private readonly onClose: () => Promise<void> = async () => {},
    private readonly prefix = "cellflow:rl",
  ) {}

  async take(key: string, rate: RateLimit, opts: TakeOptions = {}): Promise<Take> {
    const { limit, windowMs, weightLimit } = rate;
    const weight = opts.weight ?? 1;
    if (weightLimit !== undefined && weight > weightLimit) {
      throw new RangeError(`weight ${weight} > limit ${weightLimit}`);
    }
    const reachMs = Math.max(
      0,
      Math.min(opts.maxWaitMs ?? Number.POSITIVE_INFINITY, horizonMs(windowMs)),
    );
    const weighing =
      weightLimit === undefined
        ? undefined
        : { weightLimit, coolKey: this.coolKeyOf(key), partCap: opts.partCap };
    // One per take (a few fields): the reach is the caller's, and the member names the slot.
    const rl = new Ratelimit({
      redis: this.redis,
      limiter: slidingLog(limit, windowMs, reachMs, randomUUID(), weighing),
      prefix: this.prefixOf(rate),
      timeout: TAKE_TIMEOUT_MS,
      analytics: false,
      // The ephemeral cache answers "blocked" locally until a reset it computed; the
      // log's own answer is cheap and exact.
      ephemeralCache: false,
    });
    try {
      // The weight rides as the library's own per-call `rate`.
      const res = await rl.limit(slotTagged(key), weighing ? { rate: weight } : undefined);
      if (res.reason === "timeout") {
        return { ok: false, retryAfterMs: UNAVAILABLE_RETRY_MS, reason: "unavailable" };
      }
      if (res.success && "slot" in res && isSlot(res.slot)) return { ok: true, ...res.slot };
      if (!res.success && "retryAfterMs" in res && typeof res.retryAfterMs === "number") {
        return { ok: false, retryAfterMs: res.retryAfterMs, reason: "limited" };
      }
      return { ok: false, retryAfterMs: UNAVAILABLE_RETRY_MS, reason: "unavailable" };
    } catch {
      return { ok: false, retryAfterMs: UNAVAILABLE_RETRY_MS, reason: "unavailable" };
    }
  }

  async release(key: string, limit: RateLimit, slot: Slot): Promise<void> {
    await this.redis
      .zrem(`${this.prefixOf(limit)}:${slotTagged(key)}`, slot.ticket)
      .catch(() => {});
  }

  async settle(key: string, rate: RateLimit, slot: Slot, weight: number): Promise<void> {
    if (rate.weightLimit === undefined) return;
    const id = slot.ticket.slice(0, slot.ticket.lastIndexOf(":"));
    await this.redis
      .eval(
        SETTLE_SCRIPT,
        [`${this.prefixOf(rate)}:${slotTagged(key)}`],
        [slot.ticket, `${id}:${weight}`],
      )
      .catch(() => {});
  }

  async coolDown(key: string, ms: number): Promise<void> {
    await this.redis
      .eval(COOL_DOWN_SCRIPT, [this.coolKeyOf(key)], [Math.max(1, Math.round(ms))])
      .catch(() => {});
  }

  async close(): Promise<void> {
    await this.onClose();
  }

  /** `Ratelimit` keys a log `<prefix>:<identifier>`. */
  private prefixOf({ limit, windowMs, weightLimit }: RateLimit): string {
    return weightLimit === undefined
      ? `${this.prefix}:${limit}/${windowMs}`
      : `${this.prefix}:${limit}+${weightLimit}/${windowMs}`;
  }

  private coolKeyOf(key: string): string {
    return `${this.prefix}:cool:${slotTagged(key)}`;
  }
}

/**
 * A key's log and its cool-down are read by one script, so on a Redis Cluster (or any
 * store that checks a script's declared keys, as Upstash's multi-zone databases do) they
 * must hash to one slot: the key goes in braces, a hash tag, in both names. The prefixes
 * hold no brace, so the tag is the first one in each name and the same in both.
 */
export function slotTagged(key: string): string {
  return `{${key}}`;
}

function isSlot(v: unknown): v is Slot {
  if (typeof v !== "object" || v === null) return false;
  const s = v as Record<string, unknown>;
  return typeof s.at === "number" && typeof s.waitMs === "number" && typeof s.ticket === "string";
}

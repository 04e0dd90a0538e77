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
 * Invariant: never fail open. The library's timeout resolves `success: true` with
 * reason "timeout"; that, and any error (Redis down, script error), answer "unavailable".
 */
import { createHash, randomUUID } from "node:crypto";
import { type Algorithm, Ratelimit } from "@upstash/ratelimit";
import type { Redis } from "@upstash/redis";
import type { RateLimit, RateLimiter, Slot, Take, TakeOptions } from "./port";
import { guardMs, horizonMs, spacingMs } from "./slots";

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
const SCRIPT_SHA = createHash("sha1").update(SLIDING_LOG_SCRIPT).digest("hex");

/** How long one `take` may take before it answers "unavailable". */
export const TAKE_TIMEOUT_MS = 2_000;
/** What "unavailable" asks the caller to wait before asking again. */
export const UNAVAILABLE_RETRY_MS = 500;

async function evalLog(ctx: RegionContext, key: string, args: (string | number)[]) {
  try {
    return await ctx.redis.evalsha<(string | number)[], [number, number, number?]>(
      SCRIPT_SHA,
      [key],
      args,
    );
  } catch (err) {
    if (!String(err).includes("NOSCRIPT")) throw err;
    return await ctx.redis.eval<(string | number)[], [number, number, number?]>(
      SLIDING_LOG_SCRIPT,
      [key],
      args,
    );
  }
}

/** The log as a `Ratelimit` algorithm; a grant's slot rides back on the response. */
function slidingLog(
  limit: number,
  windowMs: number,
  reachMs: number,
  member: string,
): Algorithm<RegionContext> {
  return () => ({
    async limit(ctx, identifier) {
      const [granted, wait, at] = await evalLog(ctx, identifier, [
        limit,
        windowMs,
        member,
        spacingMs(limit, windowMs),
        guardMs(windowMs),
        Math.round(reachMs),
      ]);
      const ok = Number(granted) === 1;
      const waitMs = Math.max(ok ? 0 : 1, Number(wait));
      return {
        success: ok,
        limit,
        remaining: 0,
        reset: ok ? Number(at) : Date.now() + waitMs,
        pending: Promise.resolve(),
        slot: ok ? { at: Number(at), waitMs, ticket: member } : undefined,
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

  async take(key: string, { limit, windowMs }: RateLimit, opts: TakeOptions = {}): Promise<Take> {
    const reachMs = Math.max(
      0,
      Math.min(opts.maxWaitMs ?? Number.POSITIVE_INFINITY, horizonMs(windowMs)),
    );
    // One per take (a few fields): the reach is the caller's, and the member names the slot.
    const rl = new Ratelimit({
      redis: this.redis,
      limiter: slidingLog(limit, windowMs, reachMs, randomUUID()),
      prefix: this.prefixOf({ limit, windowMs }),
      timeout: TAKE_TIMEOUT_MS,
      analytics: false,
      // The ephemeral cache answers "blocked" locally until a reset it computed; the
      // log's own answer is cheap and exact.
      ephemeralCache: false,
    });
    try {
      const res = await rl.limit(key);
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
    await this.redis.zrem(`${this.prefixOf(limit)}:${key}`, slot.ticket).catch(() => {});
  }

  async close(): Promise<void> {
    await this.onClose();
  }

  /** `Ratelimit` keys a log `<prefix>:<identifier>`. */
  private prefixOf({ limit, windowMs }: RateLimit): string {
    return `${this.prefix}:${limit}/${windowMs}`;
  }
}

function isSlot(v: unknown): v is Slot {
  if (typeof v !== "object" || v === null) return false;
  const s = v as Record<string, unknown>;
  return typeof s.at === "number" && typeof s.waitMs === "number" && typeof s.ticket === "string";
}

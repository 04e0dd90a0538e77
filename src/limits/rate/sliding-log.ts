/**
 * The limiter both Redis-backed adapters run: `@upstash/ratelimit`'s `Ratelimit` (its
 * timeout, prefix and key layout) with a strict sliding-log algorithm plugged in as its
 * `limiter`. Why not the built-in algorithms: `slidingWindow` weighs the previous
 * window's count, and `fixedWindow`/`tokenBucket` refill on a grid, so all three let
 * limit + 1 (up to 2 × limit) calls through some window of `windowMs` — measurably so
 * under the steady contention pacing creates. The log keeps one entry per granted call
 * stamped with Redis's own clock (one clock for every process), so no `windowMs` span
 * ever holds more than `limit` grants (see the script for its two refinements).
 *
 * Invariant: never fail open. The library's timeout resolves `success: true` with
 * reason "timeout"; that, and any error (Redis down, script error), answer "unavailable".
 */
import { createHash, randomUUID } from "node:crypto";
import { type Algorithm, Ratelimit } from "@upstash/ratelimit";
import type { Redis } from "@upstash/redis";
import { guardMs, spacingMs } from "./memory";
import type { RateLimit, RateLimiter, Take } from "./port";

type RegionContext = Parameters<
  ReturnType<Algorithm<{ redis: Redis; prefix: string }>>["limit"]
>[0];

/**
 * KEYS[1] the log; ARGV: limit, windowMs, a unique member, spacingMs, guardMs. Grants
 * ({1, remaining, redisNowMs})
 * when fewer than `limit` entries are younger than windowMs + guardMs and the newest is
 * at least spacingMs old; else returns {0, ms until both hold}. Why the guard: a
 * provider counts arrivals, which reach it with jittered latency — a window a hair
 * longer than its own keeps our grants inside its limit too. Why the spacing: without
 * it a full window's worth is granted at once and expires at once, a burst every
 * window that lands on the provider (and on our own timing) as one.
 * No `#!lua` shebang: stock Redis 7.0 rejects the flags @upstash/ratelimit's own
 * scripts declare.
 */
export const SLIDING_LOG_SCRIPT = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2]) + tonumber(ARGV[5])
local spacing = tonumber(ARGV[4])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call("ZREMRANGEBYSCORE", key, "-inf", now - window)
local newest = redis.call("ZRANGE", key, -1, -1, "WITHSCORES")
local wait = 0
if newest[2] and tonumber(newest[2]) + spacing > now then
  wait = tonumber(newest[2]) + spacing - now
end
local n = redis.call("ZCARD", key)
if n >= limit then
  local oldest = redis.call("ZRANGE", key, 0, 0, "WITHSCORES")
  wait = math.max(wait, tonumber(oldest[2]) + window - now)
end
if wait > 0 then
  return {0, wait}
end
redis.call("ZADD", key, now, ARGV[3])
redis.call("PEXPIRE", key, window)
return {1, limit - n - 1, now}
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

function slidingLog(limit: number, windowMs: number): Algorithm<RegionContext> {
  return () => ({
    async limit(ctx, identifier) {
      const [granted, value, at] = await evalLog(ctx, identifier, [
        limit,
        windowMs,
        randomUUID(),
        spacingMs(limit, windowMs),
        guardMs(windowMs),
      ]);
      const ok = Number(granted) === 1;
      return {
        success: ok,
        limit,
        remaining: ok ? Number(value) : 0,
        // On a grant, `reset` carries Redis's grant time (+ window) back to `take`.
        reset: ok ? Number(at) + windowMs : Date.now() + Math.max(1, Number(value)),
        pending: Promise.resolve(),
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

/** A `RateLimiter` over one `@upstash/redis` client; one `Ratelimit` per (limit, window). */
export class SlidingLogLimiter implements RateLimiter {
  private readonly limiters = new Map<string, Ratelimit>();

  constructor(
    readonly kind: "upstash" | "redis",
    private readonly redis: Redis,
    private readonly onClose: () => Promise<void> = async () => {},
    private readonly prefix = "cellflow:rl",
  ) {}

  async take(key: string, { limit, windowMs }: RateLimit): Promise<Take> {
    const id = `${limit}/${windowMs}`;
    let rl = this.limiters.get(id);
    if (!rl) {
      rl = new Ratelimit({
        redis: this.redis,
        limiter: slidingLog(limit, windowMs),
        prefix: `${this.prefix}:${id}`,
        timeout: TAKE_TIMEOUT_MS,
        analytics: false,
        // The ephemeral cache answers "blocked" locally until a reset it computed; the
        // log's own answer is cheap and exact, and a Map per instance would only grow.
        ephemeralCache: false,
      });
      this.limiters.set(id, rl);
    }
    try {
      const res = await rl.limit(key);
      if (res.reason === "timeout") {
        return { ok: false, retryAfterMs: UNAVAILABLE_RETRY_MS, reason: "unavailable" };
      }
      if (res.success) return { ok: true, at: res.reset - windowMs };
      return { ok: false, retryAfterMs: Math.max(1, res.reset - Date.now()), reason: "limited" };
    } catch {
      return { ok: false, retryAfterMs: UNAVAILABLE_RETRY_MS, reason: "unavailable" };
    }
  }

  async close(): Promise<void> {
    this.limiters.clear();
    await this.onClose();
  }
}

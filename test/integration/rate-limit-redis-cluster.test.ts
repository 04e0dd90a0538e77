/**
 * The shared limiter on a Redis Cluster: a key's sliding log and its cool-down are read by
 * one script, so they must hash to one slot (a cluster answers CROSSSLOT otherwise, and
 * the limiter, which never fails open, would refuse every call as unavailable). On a
 * one-node cluster that holds scripts to one slot as every cluster does, through ioredis
 * and through the Upstash REST client: weighted takes are granted, a cool-down holds the
 * next take, a settle and a release reach the log.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RateLimiter } from "@/limits/rate/port";
import { createRedisLimiter } from "@/limits/rate/redis";
import { createUpstashLimiter } from "@/limits/rate/upstash";
import { type RedisServer, startRedis } from "../helpers/redis";
import { startUpstashShim, type UpstashShim } from "../helpers/upstash-shim";

let redis: RedisServer;
let shim: UpstashShim;
const opened: RateLimiter[] = [];

beforeAll(async () => {
  redis = await startRedis({ cluster: true });
  shim = await startUpstashShim(redis.url);
});
afterAll(async () => {
  for (const l of opened) await l.close();
  await shim?.close();
  await redis?.stop();
});

let keys = 0;
const freshKey = () => `ws${++keys}-${Date.now()}:llm:model`;

const adapters: [string, () => RateLimiter][] = [
  ["redis", () => createRedisLimiter(redis.url)],
  ["upstash", () => createUpstashLimiter(shim.url, shim.token)],
];

describe.each(adapters)("the %s limiter on a Redis Cluster", (_name, make) => {
  it("grants weighted takes: the log and the cool-down of a key share a slot", async () => {
    const limiter = make();
    opened.push(limiter);
    const key = freshKey();
    const limit = { limit: 1, windowMs: 10_000, weightLimit: 1_000 };
    const first = await limiter.take(key, limit, { weight: 900, maxWaitMs: 0 });
    expect(first).toMatchObject({ ok: true });
    if (!first.ok) return;
    // The window is full: limited, not unavailable (a CROSSSLOT error reads as unavailable).
    expect(await limiter.take(key, limit, { weight: 50, maxWaitMs: 0 })).toMatchObject({
      ok: false,
      reason: "limited",
    });
    await limiter.release(key, limit, first);
    expect(await limiter.take(key, limit, { weight: 900, maxWaitMs: 0 })).toMatchObject({
      ok: true,
    });
  });

  it("gives a settled take's unused tokens back", async () => {
    const limiter = make();
    opened.push(limiter);
    const key = freshKey();
    // 6,000 per 10 s, so 1,000 per sixth of it (slots.ts WEIGHT_PARTS).
    const limit = { limit: 100, windowMs: 10_000, weightLimit: 6_000 };
    const first = await limiter.take(key, limit, { weight: 800, maxWaitMs: 0 });
    expect(first).toMatchObject({ ok: true });
    if (!first.ok) return;
    expect(await limiter.take(key, limit, { weight: 800, maxWaitMs: 50 })).toMatchObject({
      ok: false,
      reason: "limited",
    });
    await limiter.settle(key, limit, first, 100);
    const later = await limiter.take(key, limit, { weight: 800, maxWaitMs: 1_000 });
    expect(later).toMatchObject({ ok: true });
    // Its turn is now, less the spacing of the requests (10 s / 100 / 2).
    if (later.ok) expect(later.waitMs).toBeLessThanOrEqual(60);
  });

  it("holds the takes of a key while it cools down, and only that key's", async () => {
    const limiter = make();
    opened.push(limiter);
    const [cooled, other] = [freshKey(), freshKey()];
    const limit = { limit: 100, windowMs: 10_000, weightLimit: 1_000 };
    await limiter.coolDown(cooled, 3_000);
    const held = await limiter.take(cooled, limit, { weight: 10, maxWaitMs: 100 });
    expect(held).toMatchObject({ ok: false, reason: "limited" });
    if (!held.ok) expect(held.retryAfterMs).toBeGreaterThan(2_500);
    expect(await limiter.take(other, limit, { weight: 10, maxWaitMs: 100 })).toMatchObject({
      ok: true,
    });
  });

  it("paces unweighted takes (one key per script)", async () => {
    const limiter = make();
    opened.push(limiter);
    const key = freshKey();
    const limit = { limit: 2, windowMs: 10_000 };
    expect((await limiter.take(key, limit, { maxWaitMs: 0 })).ok).toBe(true);
  });
});

/**
 * Token-aware limits shared by every worker process: on every shared adapter, weighted
 * takes from two limiter instances (two processes' pools or clients) never put more than
 * the token limit in any window; a settle gives the unused tokens back and counts an
 * excess; a release gives back the request and the tokens; a cool-down set by one process
 * holds the other's takes. Through `paceLlmCall`: a reservation over the limit is refused
 * at once, a Stop ends a wait at once and a later call takes the freed turn, a 429 cools
 * the key for another process (and a call of the same process holding an earlier slot
 * gives it back), and the limits follow the plan and the environment.
 */
import { createDatabase, type Database, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readEnv } from "@/config/env";
import { CancelledError, isOverRateLimit } from "@/errors";
import { RateLines } from "@/limits/rate/line";
import { coolLlmKey, llmLimits, llmRateKey, llmRateLimit, paceLlmCall } from "@/limits/rate/llm";
import { MemoryLimiter } from "@/limits/rate/memory";
import type { RateLimit, RateLimiter, Slot } from "@/limits/rate/port";
import { PostgresLimiter } from "@/limits/rate/postgres";
import { createRedisLimiter } from "@/limits/rate/redis";
import { createUpstashLimiter } from "@/limits/rate/upstash";
import { useTestDatabase } from "../helpers/db";
import { maxWeightInAnyWindow } from "../helpers/pacers";
import { waitFor } from "../helpers/processes";
import { type RedisServer, startRedis } from "../helpers/redis";
import { startUpstashShim, type UpstashShim } from "../helpers/upstash-shim";

let redis: RedisServer;
let shim: UpstashShim;
let dbUrl: string;
const pools: Database[] = [];
const opened: RateLimiter[] = [];
const track = <T extends RateLimiter>(l: T): T => {
  opened.push(l);
  return l;
};
/** A pool of its own, as another worker process has. */
const ownPool = () => {
  const database = createDatabase({ url: dbUrl });
  pools.push(database);
  return database.db;
};

beforeAll(async () => {
  dbUrl = (await useTestDatabase()).url;
  redis = await startRedis();
  shim = await startUpstashShim(redis.url);
});
afterAll(async () => {
  for (const l of opened) await l.close();
  for (const p of pools) await p.close();
  await shim?.close();
  await redis?.stop();
});

let keys = 0;
const freshKey = () => `ws${++keys}-${Date.now()}:llm:model`;

/** Two limiters on one shared store, each with its own connections: two processes. */
const shared: [string, () => RateLimiter][] = [
  ["redis", () => track(createRedisLimiter(redis.url))],
  ["upstash", () => track(createUpstashLimiter(shim.url, shim.token))],
  ["postgres", () => track(new PostgresLimiter(ownPool()))],
];

const granted = async (l: RateLimiter, key: string, limit: RateLimit, weight: number) => {
  const take = await l.take(key, limit, { weight });
  if (!take.ok) throw new Error(`refused: ${take.reason}, ${take.retryAfterMs} ms`);
  return take;
};

describe.each(shared)("weighted takes on the %s limiter", (_name, make) => {
  it("never put more than the token limit in any window across two processes", async () => {
    const [a, b] = [make(), make()];
    const key = freshKey();
    // 1 s windows so the test is short; every call reserves 300 and uses 20-300.
    const limit = { limit: 1_000, windowMs: 1_000, weightLimit: 6_000 };
    const lines = [new RateLines(a), new RateLines(b)];
    const calls: { at: number; weight: number }[] = [];
    await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const line = lines[i % 2] as RateLines;
        const slot = await line.paceSlot(key, limit, { weight: 300, baseMs: 5 });
        const used = 20 + ((i * 37) % 281);
        await line.limiter.settle(key, limit, slot, used);
        calls.push({ at: slot.at, weight: used });
      }),
    );
    expect(calls).toHaveLength(60);
    const busiest = maxWeightInAnyWindow(calls, 1_000);
    expect(busiest).toBeLessThanOrEqual(6_000);
    // How full the windows get depends on how fast this machine answers (a 1 s window); that
    // settled tokens are given back is the next test's, judged without a clock.
  }, 30_000);

  it("gives a settled call's unused tokens back: a later call of another process goes sooner", async () => {
    const [a, b] = [make(), make()];
    const key = freshKey();
    // 6,000 per 10 s, so 1,000 per sixth of it (slots.ts WEIGHT_PARTS).
    const limit = { limit: 100, windowMs: 10_000, weightLimit: 6_000 };
    const first = await granted(a, key, limit, 800);
    // Reserved, the sixth has no room for another 800 (and nothing is reserved ahead).
    expect(await b.take(key, limit, { weight: 800, maxWaitMs: 50 })).toMatchObject({
      ok: false,
      reason: "limited",
    });
    await a.settle(key, limit, first, 100);
    const later = await granted(b, key, limit, 800);
    // Its turn is now, less the spacing of the requests (10 s / 100 / 2).
    expect(later.waitMs).toBeLessThanOrEqual(60);
  });

  it("counts a settled excess: more used than reserved holds the calls after it", async () => {
    const [a, b] = [make(), make()];
    const key = freshKey();
    // 6,000 per 10 s, so 1,000 per sixth of it (slots.ts WEIGHT_PARTS).
    const limit = { limit: 100, windowMs: 10_000, weightLimit: 6_000 };
    const first = await granted(a, key, limit, 100);
    await a.settle(key, limit, first, 900);
    // 900 are in the sixth now, not 100: 200 more must wait for it to pass…
    expect(await b.take(key, limit, { weight: 200, maxWaitMs: 1_000 })).toMatchObject({
      ok: false,
      reason: "limited",
    });
    // …and 100 fit.
    expect((await b.take(key, limit, { weight: 100, maxWaitMs: 1_000 })).ok).toBe(true);
  });

  it("counts a call in flight at the part cap in a sixth, and at its whole reservation in the window", async () => {
    const [a, b] = [make(), make()];
    const key = freshKey();
    // 6,000 per 10 s, so 1,000 per sixth; no spacing between requests (10,000 per 10 s).
    const limit = { limit: 10_000, windowMs: 10_000, weightLimit: 6_000 };
    await granted(a, key, limit, 800);
    // Without a cap the sixth holds the 800 in flight: another 800 must wait for it to pass.
    expect(await b.take(key, limit, { weight: 800, maxWaitMs: 50 })).toMatchObject({
      ok: false,
      reason: "limited",
    });
    // Counted at 100 each in the sixth, six more go now: 5,600 reserved in the window…
    for (let i = 0; i < 6; i++) {
      expect((await b.take(key, limit, { weight: 800, maxWaitMs: 50, partCap: 100 })).ok).toBe(
        true,
      );
    }
    // …and the window counts every reservation in full: 800 more would pass 6,000.
    const full = await a.take(key, limit, { weight: 800, maxWaitMs: 1_000, partCap: 100 });
    expect(full).toMatchObject({ ok: false, reason: "limited" });
    if (!full.ok) expect(full.retryAfterMs).toBeGreaterThan(5_000);
    expect((await a.take(key, limit, { weight: 400, maxWaitMs: 50, partCap: 100 })).ok).toBe(true);
  });

  it("gives a released call's request and tokens back", async () => {
    const [a, b] = [make(), make()];
    const key = freshKey();
    // One request and 1,000 tokens per 10 s: a second call waits for the window.
    const limit = { limit: 1, windowMs: 10_000, weightLimit: 1_000 };
    const first = await granted(a, key, limit, 900);
    expect((await b.take(key, limit, { weight: 50, maxWaitMs: 1_000 })).ok).toBe(false);
    await a.release(key, limit, first);
    expect((await granted(b, key, limit, 900)).waitMs).toBeLessThan(100);
  });

  it("holds every process's takes while a key cools down", async () => {
    const [a, b] = [make(), make()];
    const key = freshKey();
    const limit = { limit: 100, windowMs: 10_000, weightLimit: 1_000 };
    await a.coolDown(key, 3_000);
    const near = await b.take(key, limit, { weight: 10, maxWaitMs: 100 });
    expect(near).toMatchObject({ ok: false, reason: "limited" });
    if (!near.ok) expect(near.retryAfterMs).toBeGreaterThan(2_500);
    // A caller that can wait is given the first slot after the cool-down.
    const after = await granted(b, key, limit, 10);
    expect(after.waitMs).toBeGreaterThan(2_500);
    expect(after.waitMs).toBeLessThanOrEqual(3_000);
    // A shorter cool-down does not shorten a longer one.
    const other = freshKey();
    await a.coolDown(other, 3_000);
    await b.coolDown(other, 10);
    const held = await a.take(other, limit, { weight: 10, maxWaitMs: 100 });
    expect(held.ok).toBe(false);
    if (!held.ok) expect(held.retryAfterMs).toBeGreaterThan(2_500);
  });

  it("refuses a weight over the whole limit instead of reserving it", async () => {
    const limiter = make();
    const limit = { limit: 100, windowMs: 10_000, weightLimit: 1_000 };
    await expect(limiter.take(freshKey(), limit, { weight: 1_001 })).rejects.toBeInstanceOf(
      RangeError,
    );
  });
});

describe("the Postgres weighted take across a rolling deploy", () => {
  it("still answers a worker of the previous release, which calls it without the part cap", async () => {
    const db = ownPool();
    const key = freshKey();
    const take = (weight: number) =>
      queryRows<{ granted: boolean }>(
        db,
        sql`select granted from cellflow_rate_take_weighted(${key}, ${key}, 100, 10000, 50, 100,
              100, 6000, ${weight}, 1684, 1000, 20)`,
      );
    expect(await take(800)).toEqual([{ granted: true }]);
    // The 800 reserved count in full in the sixth, as before the cap existed.
    expect(await take(800)).toEqual([{ granted: false }]);
  });
});

describe("an llm call's turn (paceLlmCall)", () => {
  const saved = {
    rpm: process.env.CELLFLOW_LLM_REQUESTS_PER_MINUTE,
    tpm: process.env.CELLFLOW_LLM_TOKENS_PER_MINUTE,
  };
  const restore = (name: string, value: string | undefined) => {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  };
  afterEach(() => {
    restore("CELLFLOW_LLM_REQUESTS_PER_MINUTE", saved.rpm);
    restore("CELLFLOW_LLM_TOKENS_PER_MINUTE", saved.tpm);
  });
  const limitTo = (rpm: number, tpm: number) => {
    process.env.CELLFLOW_LLM_REQUESTS_PER_MINUTE = String(rpm);
    process.env.CELLFLOW_LLM_TOKENS_PER_MINUTE = String(tpm);
  };
  const processes = () => [
    new RateLines(new PostgresLimiter(ownPool())),
    new RateLines(new PostgresLimiter(ownPool())),
  ];

  it("follows the plan's defaults, and the environment overrides them for every plan", () => {
    delete process.env.CELLFLOW_LLM_REQUESTS_PER_MINUTE;
    delete process.env.CELLFLOW_LLM_TOKENS_PER_MINUTE;
    expect(llmLimits("free")).toEqual({ requestsPerMinute: 60, tokensPerMinute: 40_000 });
    expect(llmLimits("pro")).toEqual({ requestsPerMinute: 500, tokensPerMinute: 200_000 });
    expect(llmLimits("unlimited")).toEqual({
      requestsPerMinute: 5_000,
      tokensPerMinute: 2_000_000,
    });
    limitTo(1_000, 300_000);
    for (const plan of ["free", "pro", "unlimited"] as const) {
      expect(llmLimits(plan)).toEqual({ requestsPerMinute: 1_000, tokensPerMinute: 300_000 });
    }
    expect(llmRateLimit("free")).toEqual({
      limit: 1_000,
      windowMs: 60_000,
      weightLimit: 300_000,
    });
    expect(() => readEnv({ CELLFLOW_LLM_TOKENS_PER_MINUTE: "0" })).toThrow();
    expect(() => readEnv({ CELLFLOW_LLM_REQUESTS_PER_MINUTE: "1.5" })).toThrow();
  });

  it("refuses at once a call whose reservation is over the tokens per minute, asking the limiter nothing", async () => {
    limitTo(100, 1_000);
    let takes = 0;
    const memory = new MemoryLimiter();
    const counting: RateLimiter = {
      kind: "memory",
      take: (...args) => {
        takes++;
        return memory.take(...args);
      },
      release: (...args) => memory.release(...args),
      settle: (...args) => memory.settle(...args),
      coolDown: (...args) => memory.coolDown(...args),
      close: async () => {},
    };
    const err = await paceLlmCall(new RateLines(counting), "ws", "free", "m", 1_001, {}).catch(
      (e: unknown) => e,
    );
    expect(isOverRateLimit(err)).toBe(true);
    expect(String(err)).toMatch(/1001 tokens.*1000 tokens per minute.*maxTokens/);
    expect(takes).toBe(0);
    // At the limit exactly, it goes.
    await expect(
      paceLlmCall(new RateLines(counting), "ws", "free", "m", 1_000, {}),
    ).resolves.toMatchObject({ waitedMs: expect.any(Number) });
  });

  it("ends a wait at once on a Stop, and a released turn goes to the next call of another process", async () => {
    limitTo(1_000, 6_000);
    const [one, two] = processes() as [RateLines, RateLines];
    const ws = `ws-stop-${Date.now()}`;
    const first = await paceLlmCall(one, ws, "free", "m", 5_000, {});
    const stop = new AbortController();
    const waiting = paceLlmCall(two, ws, "free", "m", 5_000, { signal: stop.signal }).then(
      () => ({ err: undefined as unknown, at: performance.now() }),
      (err: unknown) => ({ err, at: performance.now() }),
    );
    // It stands in its process's line: the window has no room for it.
    const key = llmRateKey(ws, "m");
    const limit = llmRateLimit("free");
    expect(await waitFor(() => two.length(key, limit) === 1, 5_000, 5)).toBe(true);
    const reason = new CancelledError();
    const stoppedAt = performance.now();
    stop.abort(reason);
    const { err, at } = await waiting;
    expect(err).toBe(reason);
    expect(at - stoppedAt).toBeLessThan(100);
    // The first call was not made after all: its turn goes to the next at once.
    await first.release();
    const next = await paceLlmCall(two, ws, "free", "m", 5_000, {});
    expect(next.waitedMs).toBeLessThan(1_000);
    await next.settle(10);
    // Settled, the tokens it did not use go to the call after it.
    const after = await paceLlmCall(one, ws, "free", "m", 900, {});
    expect(after.waitedMs).toBeLessThan(1_000);
  });

  it("a call blocked only by calls in flight goes once they settle, not a sixth of the minute later", async () => {
    // A sixth of the minute (10 s) holds 1,000 tokens: four calls in flight reserving 240
    // each leave no room for a fifth, whose slot is then 10 s ahead until they settle.
    limitTo(1_000, 6_000);
    const one = new RateLines(new PostgresLimiter(ownPool()));
    const postgres = new PostgresLimiter(ownPool());
    let answered = 0;
    const two = new RateLines({
      kind: "postgres",
      take: async (...args) => {
        const take = await postgres.take(...args);
        answered++;
        return take;
      },
      release: (...args) => postgres.release(...args),
      settle: (...args) => postgres.settle(...args),
      coolDown: (...args) => postgres.coolDown(...args),
      close: () => postgres.close(),
    });
    const ws = `ws-inflight-${Date.now()}`;
    const inFlight: Awaited<ReturnType<typeof paceLlmCall>>[] = [];
    for (let i = 0; i < 4; i++) inFlight.push(await paceLlmCall(one, ws, "free", "m", 240, {}));
    // Once the four slots are all past, nothing is reserved ahead: the fifth's first ask
    // meets only the tokens the calls in flight hold.
    const lastSlot = inFlight.at(-1)?.at ?? 0;
    expect(await waitFor(() => Date.now() > lastSlot + 5, 5_000, 5)).toBe(true);
    const fifth = paceLlmCall(two, ws, "free", "m", 240, {});
    expect(await waitFor(() => answered >= 1, 5_000, 5)).toBe(true);
    const settledAt = Date.now();
    for (const call of inFlight) await call.settle(20);
    const grant = await fifth;
    // It goes within a poll (250 ms + jitter) of the settles; a slot reserved at its first
    // ask would hold it until about 10 s after the first call.
    expect(grant.at - settledAt).toBeLessThan(5_000);
    await grant.settle(20);
  });

  it("counts this process's calls in flight in a sixth at what its settled calls used", async () => {
    // A sixth of the minute holds 1,000 tokens: four calls in flight reserving 240 each
    // would leave no room for a fifth for about 10 s, were they counted in full there.
    limitTo(1_000, 6_000);
    const one = new RateLines(new PostgresLimiter(ownPool()));
    const ws = `ws-partcap-${Date.now()}`;
    const first = await paceLlmCall(one, ws, "free", "m", 240, {});
    await first.settle(20);
    expect(one.recentUse.cap(llmRateKey(ws, "m"))).toBe(20);
    const started = Date.now();
    const inFlight: Awaited<ReturnType<typeof paceLlmCall>>[] = [];
    for (let i = 0; i < 6; i++) inFlight.push(await paceLlmCall(one, ws, "free", "m", 240, {}));
    expect((inFlight.at(-1)?.at ?? 0) - started).toBeLessThan(5_000);
    for (const call of inFlight) await call.settle(20);
  });

  it("cools the key for every process: a 429 seen by one holds the other's next call", async () => {
    limitTo(1_000, 100_000);
    const [one, two] = processes() as [RateLines, RateLines];
    const ws = `ws-cool-${Date.now()}`;
    await coolLlmKey(one, ws, "m", 1_500);
    const held = await paceLlmCall(two, ws, "free", "m", 100, {});
    expect(held.waitedMs).toBeGreaterThanOrEqual(1_300);
    // Another model of the same workspace is not held.
    const other = await paceLlmCall(two, ws, "free", "other", 100, {});
    expect(other.waitedMs).toBeLessThan(500);
  });

  it("gives back a slot taken before this process's 429 and waits behind the cool-down", async () => {
    limitTo(60, 100_000);
    const memory = new MemoryLimiter();
    let granted = 0;
    const counting: RateLimiter = {
      kind: "memory",
      take: async (...args) => {
        const take = await memory.take(...args);
        if (take.ok) granted++;
        return take;
      },
      release: (...args) => memory.release(...args),
      settle: (...args) => memory.settle(...args),
      coolDown: (...args) => memory.coolDown(...args),
      close: async () => {},
    };
    const lines = new RateLines(counting);
    await paceLlmCall(lines, "ws", "free", "m", 100, {});
    // The next slot is 500 ms ahead (60 a minute, half the even spacing): the call holds it…
    const held = paceLlmCall(lines, "ws", "free", "m", 100, {});
    expect(await waitFor(() => granted === 2, 5_000, 2)).toBe(true);
    // …when a 429 cools the key for 2 s.
    const cooledAt = Date.now();
    await coolLlmKey(lines, "ws", "m", 2_000);
    const grant = await held;
    expect(grant.at).toBeGreaterThanOrEqual(cooledAt + 2_000);
    expect(granted).toBe(3);
  });

  it("settles and releases a grant once: a second settle or release changes nothing", async () => {
    limitTo(1_000, 6_000);
    const memory = new MemoryLimiter();
    const lines = new RateLines(memory);
    const grant = await paceLlmCall(lines, "ws", "free", "m", 600, {});
    await grant.settle(500);
    await grant.release();
    await grant.settle(0);
    const limit = llmRateLimit("free");
    // 500 are still counted: 600 more do not fit in the minute's sixth (1,000), 400 do.
    expect(
      (await memory.take(llmRateKey("ws", "m"), limit, { weight: 600, maxWaitMs: 0 })).ok,
    ).toBe(false);
    const fits = await memory.take(llmRateKey("ws", "m"), limit, { weight: 400 });
    expect(fits.ok).toBe(true);
    expect((fits as Slot).waitMs).toBeLessThanOrEqual(30);
  });
});

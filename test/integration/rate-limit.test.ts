/**
 * Shared rate limits: every adapter grants exactly `limit` per window and says "not now"
 * after; a limiter that cannot answer never says "ok"; pacing spreads waiters, ends at
 * once on a Stop and gives up with the cell's message; and across two worker processes
 * on one Redis, or on one Postgres, no one-second window holds more than the limit.
 */
import net from "node:net";
import { createDatabase } from "@db/client";
import { getDatabase } from "@db/instance";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnv } from "@/config/env";
import { abortLocal, registerAttempt } from "@/engine/cancellation";
import { CancelledError, RateLimitExceeded } from "@/errors";
import { limiterFromEnv, limiterKind } from "@/limits/rate/instance";
import { MemoryLimiter } from "@/limits/rate/memory";
import { backoffMs, coolDown, pace } from "@/limits/rate/pace";
import type { RateLimiter } from "@/limits/rate/port";
import { PostgresLimiter } from "@/limits/rate/postgres";
import { createRedisLimiter, stripShebang } from "@/limits/rate/redis";
import { createUpstashLimiter } from "@/limits/rate/upstash";
import { useTestDatabase } from "../helpers/db";
import { maxInAnyWindow, runPacerProcess } from "../helpers/pacers";
import { freePort } from "../helpers/processes";
import { type RedisServer, startRedis } from "../helpers/redis";
import { startUpstashShim, type UpstashShim } from "../helpers/upstash-shim";

let redis: RedisServer;
let shim: UpstashShim;
let dbUrl: string;
const opened: RateLimiter[] = [];
const track = <T extends RateLimiter>(l: T): T => {
  opened.push(l);
  return l;
};

beforeAll(async () => {
  dbUrl = (await useTestDatabase()).url;
  redis = await startRedis();
  shim = await startUpstashShim(redis.url);
});
afterAll(async () => {
  for (const l of opened) await l.close();
  await shim?.close();
  await redis?.stop();
});

let keys = 0;
const freshKey = () => `ws${++keys}-${Date.now()}:provider`;

const adapters: [string, () => RateLimiter][] = [
  ["memory", () => new MemoryLimiter()],
  ["redis", () => track(createRedisLimiter(redis.url))],
  ["upstash", () => track(createUpstashLimiter(shim.url, shim.token))],
  ["postgres", () => track(new PostgresLimiter(getDatabase().db))],
];

describe.each(adapters)("the %s adapter", (_name, make) => {
  it("grants exactly the limit per window, then answers not-now until the window moves", async () => {
    const limiter = make();
    const key = freshKey();
    const limit = { limit: 5, windowMs: 400 };
    // When each granted take was asked and answered: the grant happened in between.
    const asked: number[] = [];
    const grants: number[] = [];
    const reasons = new Set<string>();
    while (grants.length < 6) {
      const before = performance.now();
      const take = await limiter.take(key, limit);
      if (take.ok) {
        asked.push(before);
        grants.push(performance.now());
      } else {
        reasons.add(take.reason);
        expect(take.retryAfterMs).toBeGreaterThan(0);
        expect(take.retryAfterMs).toBeLessThanOrEqual(410);
        await new Promise((r) => setTimeout(r, take.retryAfterMs));
      }
    }
    expect(reasons).toEqual(new Set(["limited"]));
    // Five inside one window, the sixth only once the first left it.
    expect((asked[4] ?? 0) - (grants[0] ?? 0)).toBeLessThan(400);
    expect((grants[5] ?? 0) - (asked[0] ?? 0)).toBeGreaterThanOrEqual(400);
    // Keys are independent: another workspace's provider is not limited by this one.
    expect((await limiter.take(`${key}-other`, limit)).ok).toBe(true);
  });
});

describe("a limiter that cannot answer", () => {
  it("says not-now when Redis is not there, never ok", async () => {
    const limiter = track(createRedisLimiter(`redis://127.0.0.1:${await freePort()}`));
    const take = await limiter.take(freshKey(), { limit: 100, windowMs: 1000 });
    expect(take).toMatchObject({ ok: false, reason: "unavailable" });
  });

  it("says not-now when Upstash is not there, never ok", async () => {
    const limiter = track(createUpstashLimiter(`http://127.0.0.1:${await freePort()}`, "t"));
    const take = await limiter.take(freshKey(), { limit: 100, windowMs: 1000 });
    expect(take).toMatchObject({ ok: false, reason: "unavailable" });
  });

  it("says not-now when Redis goes down after answering", async () => {
    const own = await startRedis();
    const limiter = track(createRedisLimiter(own.url));
    const key = freshKey();
    expect((await limiter.take(key, { limit: 100, windowMs: 1000 })).ok).toBe(true);
    await own.stop();
    const take = await limiter.take(key, { limit: 100, windowMs: 1000 });
    expect(take).toMatchObject({ ok: false, reason: "unavailable" });
  });

  it("says not-now when Redis hangs (the library's timeout does not fail open)", async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      const limiter = track(createRedisLimiter(`redis://127.0.0.1:${port}`));
      const take = await limiter.take(freshKey(), { limit: 100, windowMs: 1000 });
      expect(take).toMatchObject({ ok: false, reason: "unavailable" });
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it("says not-now when Postgres is not there, never ok", async () => {
    const database = createDatabase({ url: `postgres://x:y@127.0.0.1:${await freePort()}/none` });
    try {
      const take = await new PostgresLimiter(database.db).take(freshKey(), {
        limit: 100,
        windowMs: 1000,
      });
      expect(take).toMatchObject({ ok: false, reason: "unavailable" });
    } finally {
      await database.close();
    }
  });

  it("says not-now when the key's log stays locked past the timeout (a stuck taker holds it)", async () => {
    const limiter = new PostgresLimiter(getDatabase().db, 300);
    const key = freshKey();
    const limit = { limit: 100, windowMs: 1000 };
    expect((await limiter.take(key, limit)).ok).toBe(true);
    const holder = new pg.Client({ connectionString: dbUrl });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query("select 1 from rate_limit_logs where key = $1 for update", [
        `100/1000:${key}`,
      ]);
      expect(await limiter.take(key, limit)).toMatchObject({ ok: false, reason: "unavailable" });
      // The database's own lock timeout ends the blocked take too: no connection waits forever.
      const started = Date.now();
      const blocked = new pg.Client({ connectionString: dbUrl });
      await blocked.connect();
      try {
        await expect(
          blocked.query("select * from cellflow_rate_take($1, 100, 1000, 5, 10)", [
            `100/1000:${key}`,
          ]),
        ).rejects.toThrow(/lock timeout/);
      } finally {
        await blocked.end();
      }
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await holder.query("rollback");
      await holder.end();
    }
    expect((await limiter.take(key, limit)).ok).toBe(true);
  });
});

describe("the environment", () => {
  it("picks Upstash, then REDIS_URL, then Postgres; the in-process limiter only when named", async () => {
    const up = track(
      limiterFromEnv(
        readEnv({
          UPSTASH_REDIS_REST_URL: shim.url,
          UPSTASH_REDIS_REST_TOKEN: "x",
          REDIS_URL: redis.url,
        }),
      ),
    );
    expect(up.kind).toBe("upstash");
    expect(track(limiterFromEnv(readEnv({ REDIS_URL: redis.url }))).kind).toBe("redis");
    expect(limiterFromEnv(readEnv({}), getDatabase().db).kind).toBe("postgres");
    expect(() => limiterFromEnv(readEnv({}))).toThrow(/needs a database/);
    expect(limiterKind(readEnv({ RATE_LIMITER: "memory", REDIS_URL: redis.url }))).toBe("memory");
    expect(limiterKind(readEnv({ RATE_LIMITER: "postgres", REDIS_URL: redis.url }))).toBe(
      "postgres",
    );
    expect(() => limiterKind(readEnv({ RATE_LIMITER: "redis" }))).toThrow(/needs REDIS_URL/);
    expect(() => limiterKind(readEnv({ RATE_LIMITER: "upstash" }))).toThrow(/needs UPSTASH/);
    expect(() => limiterFromEnv(readEnv({ UPSTASH_REDIS_REST_URL: shim.url }))).toThrow(/both/);
  });

  it("strips only the script flag line stock Redis rejects", () => {
    expect(stripShebang("#!lua flags=allow-key-locking\n  return 1")).toBe("  return 1");
    expect(stripShebang("return 1")).toBe("return 1");
  });
});

describe("pacing", () => {
  /** A limiter that refuses the first `refusals` takes of every call to pace. */
  const refusing = (refusals: number, retryAfterMs: number, seen: number[][]): RateLimiter => {
    return {
      kind: "memory",
      async take(key) {
        const i = Number(key);
        const times = seen[i] ?? [];
        seen[i] = times;
        times.push(performance.now());
        return times.length > refusals
          ? { ok: true }
          : { ok: false, retryAfterMs, reason: "limited" };
      },
      async close() {},
    };
  };

  it("spreads waiters instead of waking them in lockstep", async () => {
    const seen: number[][] = [];
    const limiter = refusing(2, 50, seen);
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        pace(limiter, String(i), { limit: 1, windowMs: 1000 }, { baseMs: 50 }),
      ),
    );
    const waits = seen.map((t) => Math.round((t[1] ?? 0) - (t[0] ?? 0)));
    // Never before the limiter's own retry-after (a loaded machine only fires timers late).
    for (const w of waits) expect(w).toBeGreaterThanOrEqual(49);
    // The spread is in the scheduled waits: wall-clock ones bunch up when timers fire
    // late under load, so distinctness is checked where the waits are chosen.
    const limited = { retryAfterMs: 50, reason: "limited" as const };
    const down = { retryAfterMs: 0, reason: "unavailable" as const };
    expect(new Set(Array.from({ length: 20 }, () => backoffMs(3, down, 100, 5000))).size).toBe(20);
    expect(new Set(Array.from({ length: 20 }, () => backoffMs(0, limited, 50, 5000))).size).toBe(
      20,
    );
  });

  it("waits out a known retry-after with a jitter capped at four bases; backs off exponentially only when the limiter cannot answer", () => {
    const limited = { retryAfterMs: 30, reason: "limited" as const };
    const down = { retryAfterMs: 500, reason: "unavailable" as const };
    const top = () => 0.999_999;
    // Refusal after refusal, a limited waiter never waits much past when a call frees up.
    for (const attempt of [0, 1, 2, 5, 20]) {
      const w = backoffMs(attempt, limited, 10, 5_000, top);
      expect(w).toBeGreaterThanOrEqual(30);
      expect(w).toBeLessThanOrEqual(30 + 10 * Math.min(4, 2 ** attempt));
    }
    expect(backoffMs(0, limited, 10, 5_000, () => 0)).toBe(30);
    // A limiter that is down is asked less and less often, up to the cap.
    expect(backoffMs(0, down, 100, 5_000, top)).toBeLessThan(601);
    expect(backoffMs(6, down, 100, 5_000, top)).toBeGreaterThan(5_000 * 0.99);
    expect(backoffMs(20, down, 100, 5_000, top)).toBeLessThanOrEqual(5_000);
  });

  it("ends a rate-limit wait at once when the attempt is stopped", async () => {
    const limiter = new MemoryLimiter();
    const key = freshKey();
    await limiter.take(key, { limit: 1, windowMs: 60_000 });
    const controller = new AbortController();
    const unregister = registerAttempt("exec-rate-wait", controller);
    const waiting = pace(
      limiter,
      key,
      { limit: 1, windowMs: 60_000 },
      { signal: controller.signal },
    );
    const caught = waiting.then(
      () => ({ err: undefined as unknown, at: performance.now() }),
      (err: unknown) => ({ err, at: performance.now() }),
    );
    await new Promise((r) => setTimeout(r, 100));
    const stoppedAt = performance.now();
    expect(abortLocal(["exec-rate-wait"])).toBe(1);
    const { err, at } = await caught;
    unregister();
    expect(err).toBeInstanceOf(CancelledError);
    expect(at - stoppedAt).toBeLessThan(50);
  });

  it("ends a rate-limit wait when the tombstone check finds the cell stopped", async () => {
    const limiter = new MemoryLimiter();
    const key = freshKey();
    await limiter.take(key, { limit: 1, windowMs: 60_000 });
    let stopped = false;
    setTimeout(() => {
      stopped = true;
    }, 100);
    const started = performance.now();
    await expect(
      pace(
        limiter,
        key,
        { limit: 1, windowMs: 60_000 },
        {
          isStopped: async () => stopped,
          stopCheckMs: 50,
        },
      ),
    ).rejects.toBeInstanceOf(CancelledError);
    expect(performance.now() - started).toBeLessThan(400);
  });

  it("gives up after its budget with the message the cell shows", async () => {
    const seen: number[][] = [];
    const err = await pace(
      refusing(100, 5, seen),
      "0",
      { limit: 1, windowMs: 1000 },
      {
        attempts: 3,
        baseMs: 5,
      },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitExceeded);
    expect((err as Error).message).toBe("Rate limit exceeded — retry later");
    expect(seen[0]).toHaveLength(3);
  });

  it("honours a provider's Retry-After before the next call on that key", async () => {
    const limiter = new MemoryLimiter();
    const key = freshKey();
    coolDown(key, 300);
    const started = performance.now();
    await pace(limiter, key, { limit: 10, windowMs: 1000 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(295);
  });
});

describe.each([
  ["Redis", () => ({ REDIS_URL: redis.url })],
  ["Postgres", () => ({ REDIS_URL: "", DATABASE_URL: dbUrl })],
])("across worker processes on one %s", (_name, store) => {
  it("50 concurrent attempts at 10/s over 2 processes never exceed 10 in any one-second window", async () => {
    const env = {
      ...store(),
      PACERS: "25",
      GRANTS_EACH: "1",
      LIMIT: "10",
      WINDOW_MS: "1000",
      KEY: freshKey(),
      START_AT: String(Date.now() + 3_000),
    };
    const [a, b] = await Promise.all([runPacerProcess(env), runPacerProcess(env)]);
    const grants = [...a.grants, ...b.grants];
    expect(a.grants.length).toBe(25);
    expect(b.grants.length).toBe(25);
    expect(maxInAnyWindow(grants, 1000)).toBeLessThanOrEqual(10);
    // And the limit is used, not starved: 50 grants at 10/s take about 4-5 s.
    expect(Math.max(...grants) - Math.min(...grants)).toBeLessThan(7_000);
  }, 60_000);
});

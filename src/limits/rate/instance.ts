/**
 * This process's rate limiter, chosen once from the environment. RATE_LIMITER names it;
 * unset, it is Upstash when UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN are set,
 * else a plain Redis when REDIS_URL is, else Postgres: the database every process of a
 * deployment already shares. The in-process limiter (each process on its own) is only
 * ever used when RATE_LIMITER=memory asks for it, never as a fallback.
 */
import type { Db } from "@db/client";
import { type Env, readEnv } from "@/config/env";
import { log } from "@/config/log";
import { MemoryLimiter } from "./memory";
import type { RateLimiter } from "./port";
import { PostgresLimiter } from "./postgres";
import { createRedisLimiter } from "./redis";
import { createUpstashLimiter } from "./upstash";

export type LimiterKind = RateLimiter["kind"];

/** Which limiter the environment asks for; throws on a configuration that cannot work. */
export function limiterKind(env: Env): LimiterKind {
  const url = env.UPSTASH_REDIS_REST_URL;
  const token = env.UPSTASH_REDIS_REST_TOKEN;
  // Half a configuration would silently fall back to another limiter.
  if ((url || token) && !(url && token)) {
    throw new Error("Set both UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, or neither");
  }
  const kind = env.RATE_LIMITER ?? (url ? "upstash" : env.REDIS_URL ? "redis" : "postgres");
  if (kind === "upstash" && !url) {
    throw new Error("RATE_LIMITER=upstash needs UPSTASH_REDIS_REST_URL and _TOKEN");
  }
  if (kind === "redis" && !env.REDIS_URL) throw new Error("RATE_LIMITER=redis needs REDIS_URL");
  return kind;
}

/**
 * Why `kind` cannot pace calls made from many processes at once (trigger.dev runs, each
 * its own process), or undefined when it can: only the in-process limiter cannot.
 */
export function sharedLimiterRefusal(kind: LimiterKind): string | undefined {
  return kind === "memory"
    ? "RATE_LIMITER=memory cannot limit calls across trigger.dev runs: use postgres (default), redis or upstash"
    : undefined;
}

/** The limiter `env` selects; the Postgres one takes from `db`. */
export function limiterFromEnv(env: Env, db?: Db): RateLimiter {
  const kind = limiterKind(env);
  switch (kind) {
    case "upstash":
      return createUpstashLimiter(
        env.UPSTASH_REDIS_REST_URL ?? "",
        env.UPSTASH_REDIS_REST_TOKEN ?? "",
      );
    case "redis":
      return createRedisLimiter(env.REDIS_URL ?? "");
    case "postgres":
      if (!db) throw new Error("the Postgres rate limiter needs a database");
      return new PostgresLimiter(db);
    case "memory":
      return new MemoryLimiter();
  }
}

const holder = globalThis as {
  __cellflowRateLimiter?: { kind: LimiterKind; shared?: RateLimiter };
};
const byDatabase = new WeakMap<Db, PostgresLimiter>();

/**
 * The process-wide limiter (created on first use); with Postgres, the one over `db`,
 * which is where the caller's other writes go.
 */
export function rateLimiter(db: Db): RateLimiter {
  if (!holder.__cellflowRateLimiter) {
    const env = readEnv();
    const kind = limiterKind(env);
    holder.__cellflowRateLimiter = { kind };
    if (kind === "memory") {
      log().warn(
        "RATE_LIMITER=memory: each process limits its own calls; several processes together exceed the limit",
      );
    }
    if (kind !== "postgres") holder.__cellflowRateLimiter.shared = limiterFromEnv(env);
  }
  const chosen = holder.__cellflowRateLimiter;
  if (chosen.shared) return chosen.shared;
  let limiter = byDatabase.get(db);
  if (!limiter) {
    limiter = new PostgresLimiter(db);
    byDatabase.set(db, limiter);
  }
  return limiter;
}

/** Closes the process-wide limiter (shutdown); the next `rateLimiter()` makes a new one. */
export async function closeRateLimiter(): Promise<void> {
  const chosen = holder.__cellflowRateLimiter;
  holder.__cellflowRateLimiter = undefined;
  await chosen?.shared?.close();
}

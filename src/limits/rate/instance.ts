/**
 * Which rate limiter the environment selects. RATE_LIMITER names it;
 * unset, it is Upstash when UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN are set,
 * else a plain Redis when REDIS_URL is, else Postgres: the database every process of a
 * deployment already shares. The in-process limiter (each process on its own) is only
 * ever used when RATE_LIMITER=memory asks for it, never as a fallback. A process builds
 * its one limiter at its composition root (src/runtime/engine.ts) and closes it there.
 */
import type { Db } from "@db/client";
import type { Env } from "@/config/env";
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

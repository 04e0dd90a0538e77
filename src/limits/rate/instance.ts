/**
 * This process's rate limiter, chosen once from the environment: Upstash when
 * UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN are set, else a plain Redis when
 * REDIS_URL is, else the in-process limiter (limits each process on its own).
 */
import { type Env, readEnv } from "../../config/env";
import { MemoryLimiter } from "./memory";
import type { RateLimiter } from "./port";
import { createRedisLimiter } from "./redis";
import { createUpstashLimiter } from "./upstash";

export function limiterFromEnv(env: Env): RateLimiter {
  const url = env.UPSTASH_REDIS_REST_URL;
  const token = env.UPSTASH_REDIS_REST_TOKEN;
  if (url && token) return createUpstashLimiter(url, token);
  if (url || token) {
    // Half a configuration would silently fall back to a per-process limit.
    throw new Error("Set both UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, or neither");
  }
  if (env.REDIS_URL) return createRedisLimiter(env.REDIS_URL);
  return new MemoryLimiter();
}

const holder = globalThis as { __cellflowRateLimiter?: RateLimiter };

/** The process-wide limiter (created on first use). */
export function rateLimiter(): RateLimiter {
  holder.__cellflowRateLimiter ??= limiterFromEnv(readEnv());
  return holder.__cellflowRateLimiter;
}

/** Closes the process-wide limiter (shutdown); the next `rateLimiter()` makes a new one. */
export async function closeRateLimiter(): Promise<void> {
  const limiter = holder.__cellflowRateLimiter;
  holder.__cellflowRateLimiter = undefined;
  await limiter?.close();
}

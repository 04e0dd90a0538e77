/**
 * The rate limiter on Upstash (UPSTASH_REDIS_REST_URL + UPSTASH_REDIS_REST_TOKEN):
 * `@upstash/ratelimit` over Upstash's REST API, shared by every process and region.
 *
 * Invariant: never fail open. The client retries a failed request once only, so an
 * unreachable Upstash answers "unavailable" within the take timeout (sliding-log.ts)
 * instead of after the client's default ~10 s of exponential retries.
 */
import { Redis } from "@upstash/redis";
import { SlidingLogLimiter } from "./sliding-log";

export function createUpstashLimiter(url: string, token: string): SlidingLogLimiter {
  const redis = new Redis({
    url,
    token,
    retry: { retries: 1, backoff: () => 50 },
    enableTelemetry: false,
  });
  return new SlidingLogLimiter("upstash", redis);
}

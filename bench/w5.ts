/**
 * W5: shared rate limits across processes. Two processes × 20 concurrent pacers each
 * take 1,000 grants (2,000 in all) through `pace` on the Redis adapter, limited to 50/s
 * on one key, against a redis-server of its own. Measured at the limiter, not through
 * cells: the achieved rate, the most grants any one-second window held and the wait
 * `pace` added per call. Grants are timed by Redis's clock, where the limit is counted
 * (callers hear of a grant a delivery latency later: a few ms, more on a busy 2-core
 * machine). The sliding log allows no burst, so the bound is limit + 0; throws above it.
 */
import { maxInAnyWindow, runPacerProcess } from "../test/helpers/pacers";
import { startRedis } from "../test/helpers/redis";
import { percentile } from "./setup";

export interface W5Result {
  grants: number;
  limitPerSec: number;
  achievedPerSec: number;
  maxInAnySecond: number;
  waitP50Ms: number;
  waitP99Ms: number;
}

export async function w5(
  grants: number,
  limitPerSec: number,
  pacersPerProcess = 20,
): Promise<W5Result> {
  const redis = await startRedis();
  try {
    const perProcess = Math.floor(grants / 2);
    const env = {
      REDIS_URL: redis.url,
      PACERS: String(pacersPerProcess),
      GRANTS_EACH: String(Math.ceil(perProcess / pacersPerProcess)),
      LIMIT: String(limitPerSec),
      WINDOW_MS: "1000",
      KEY: "bench:w5",
      START_AT: String(Date.now() + 3_000),
    };
    const runs = await Promise.all([runPacerProcess(env), runPacerProcess(env)]);
    const times = runs.flatMap((r) => r.grants).sort((a, b) => a - b);
    const waits = runs.flatMap((r) => r.waits);
    const first = times[0] ?? 0;
    const last = times.at(-1) ?? 0;
    const maxInAnySecond = maxInAnyWindow(times, 1000);
    const burst = 0;
    if (maxInAnySecond > limitPerSec + burst) {
      throw new Error(
        `W5: ${maxInAnySecond} grants in one second, limit ${limitPerSec} + ${burst}`,
      );
    }
    return {
      grants: times.length,
      limitPerSec,
      // n grants span n - 1 gaps.
      achievedPerSec: ((times.length - 1) * 1000) / Math.max(1, last - first),
      maxInAnySecond,
      waitP50Ms: percentile(waits, 50),
      waitP99Ms: percentile(waits, 99),
    };
  } finally {
    await redis.stop();
  }
}

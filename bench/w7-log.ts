/**
 * Where W7's tokens-per-minute budget goes, on the Postgres limiter: samples the model's
 * weighted log (`rate_limit_logs`, the database's clock) while the run goes, and splits
 * what the last sixth of the window holds (the limiter's sub-window, whose share of the
 * limit is what paces the calls) into settled calls (weighing their real usage), calls
 * granted but not yet settled (still weighing their whole reservation: in flight, or
 * answered and not yet recorded) and slots reserved ahead of now. A diagnosis, not a
 * judgement: it explains an achieved rate below the limit.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { sleep } from "@/domain/sleep";
import { partSpanMs } from "@/limits/rate/slots";

export interface W7LogShares {
  samples: number;
  /** Mean shares of the sub-window's limit (a sixth of the tokens per minute). */
  settled: number;
  unsettled: number;
  ahead: number;
  /** Mean count of granted calls not yet settled. */
  unsettledCalls: number;
}

/** Samples every `everyMs` until the returned function is called; then the means. */
export function sampleLlmLog(
  db: Db,
  model: string,
  reservation: number,
  tokensPerMinute: number,
  everyMs = 250,
): () => Promise<W7LogShares> {
  // The span the limiter counts a minute over: the window plus its 1 % guard.
  const part = partSpanMs(60_000 + 600);
  const partLimit = tokensPerMinute / 6;
  const sum = { settled: 0, unsettled: 0, ahead: 0, unsettledCalls: 0 };
  let samples = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const entries = await queryRows<{ now: string; at: string; w: number }>(
        db,
        sql`select (extract(epoch from clock_timestamp()) * 1000)::bigint as now, u.at, u.w
              from rate_limit_logs l, unnest(l.grants, l.weights) as u(at, w)
             where l.key like ${`%:llm:${model}`}`,
      );
      const now = Number(entries[0]?.now ?? 0);
      // Only once the log is busy: the idle start and end would dilute the means.
      if (entries.length > 0) {
        samples++;
        for (const e of entries) {
          const at = Number(e.at);
          if (at > now) sum.ahead += e.w;
          else if (at > now - part) {
            if (e.w === reservation) {
              sum.unsettled += e.w;
              sum.unsettledCalls++;
            } else sum.settled += e.w;
          }
        }
      }
      await sleep(everyMs);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    const mean = (x: number, of = partLimit) => +(x / Math.max(1, samples) / of).toFixed(4);
    return {
      samples,
      settled: mean(sum.settled),
      unsettled: mean(sum.unsettled),
      ahead: mean(sum.ahead),
      unsettledCalls: mean(sum.unsettledCalls, 1),
    };
  };
}

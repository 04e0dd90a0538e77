/**
 * W5: shared rate limits through real cells. A table of `cells` rows whose one group is
 * the `website_meta` enrichment over a loopback site; two `npm run worker` processes
 * share one limiter — a redis-server (REDIS_URL) or, the default, the Postgres they both
 * run on — and the provider rate is `limitPerSec` (CELLFLOW_RATE_LIMIT_PER_SECOND).
 * Every cell records in its details when the limiter granted its call (the limiter's
 * store's clock, where the limit is counted) and how long it waited:
 * the achieved rate and the most grants in any one-second window come from the grants,
 * the added wait from the waits. The sliding log allows no burst, so the bound is
 * limit + 0; it throws above it, and unless every cell completed exactly once.
 * A warm-up dispatch (not measured) runs first. Arrivals at the site are reported too:
 * they trail grants by a delivery latency, so their per-second count can exceed the
 * limit by the jitter of that latency.
 */

import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { LocalBackend } from "@/backends/local";
import { startRun } from "@/engine/dispatcher";
import { createWorkspace } from "@/store/workspaces/create";
import { type ScriptProcess, startWorkerProcess } from "../test/helpers/child-scripts";
import { startEndpoint } from "../test/helpers/endpoint";
import { maxInAnyWindow } from "../test/helpers/pacers";
import { startRedis } from "../test/helpers/redis";
import { sitesTable } from "../test/helpers/store-tables";
import { benchDatabase, checkTerminalOnce, percentile, waitForDispatch } from "./setup";

export type W5Limiter = "redis" | "postgres";

export interface W5Result {
  limiter: W5Limiter;
  cells: number;
  limitPerSec: number;
  /** Grants over their whole span, first to last. */
  achievedPerSec: number;
  /** The same without the first and last second (the window filling up and draining). */
  steadyPerSec: number;
  maxInAnySecond: number;
  arrivalsMaxInAnySecond: number;
  waitP50Ms: number;
  waitP99Ms: number;
  seconds: number;
}

export async function w5(
  adminUrl: string,
  cells: number,
  limitPerSec: number,
  limiter: W5Limiter,
  concurrencyPerWorker = 50,
): Promise<W5Result> {
  const redis = limiter === "redis" ? await startRedis() : undefined;
  const site = await startEndpoint();
  site.on("/site", async () => ({
    status: 200,
    body: "<title>ok</title>",
    headers: { "content-type": "text/html" },
  }));
  const { url, database } = await benchDatabase(adminUrl);
  const workers: ScriptProcess[] = [];
  const backend = new LocalBackend(url);
  try {
    const db = database.db;
    const ws = await createWorkspace(db, "w5", "unlimited");
    const env = workerEnv(url, limiter, redis?.url ?? "", concurrencyPerWorker, limitPerSec);
    workers.push(...(await Promise.all([startWorkerProcess(env), startWorkerProcess(env)])));
    const runAll = async (tableId: string) => {
      const run = await startRun(
        { db: db, backend },
        {
          tableId,
          groupIds: ["meta"],
          mode: "all",
          rowIds: null,
          limit: null,
          window: concurrencyPerWorker * 2,
        },
      );
      await waitForDispatch(database, run.dispatchId, 100);
    };
    // Warm-up on another table (same workspace, so the same rate key), not measured: the
    // workers open their database connections and compile their hot paths here, which
    // would otherwise show as a slow first few seconds that no limiter causes.
    const warmUp = await sitesTable(db, ws.id, concurrencyPerWorker * 2, site.url);
    await runAll(warmUp);
    const tableId = await sitesTable(db, ws.id, cells, site.url);
    site.hits.length = 0;
    const started = performance.now();
    await runAll(tableId);
    const seconds = (performance.now() - started) / 1000;
    await checkTerminalOnce(database, tableId, cells);
    const rows = await queryRows<{ status: string; at: string | null; waited: string | null }>(
      db,
      sql`select status::text as status,
                 details->'providers'->0->'rateLimit'->>'at' as at,
                 details->'providers'->0->'rateLimit'->>'waitedMs' as waited
            from cells where table_id = ${tableId}`,
    );
    const notDone = rows.filter((r) => r.status !== "completed" || r.at === null);
    if (notDone.length > 0)
      throw new Error(`W5: ${notDone.length} cells did not complete with a recorded grant`);
    const grants = rows.map((r) => Number(r.at)).sort((a, b) => a - b);
    const waits = rows.map((r) => Number(r.waited));
    const maxInAnySecond = maxInAnyWindow(grants, 1000);
    const burst = 0;
    if (maxInAnySecond > limitPerSec + burst) {
      throw new Error(
        `W5: ${maxInAnySecond} grants in one second, limit ${limitPerSec} + ${burst}`,
      );
    }
    const first = grants[0] ?? 0;
    const last = grants.at(-1) ?? 0;
    const inner = grants.filter((t) => t >= first + 1_000 && t <= last - 1_000);
    return {
      limiter,
      cells,
      limitPerSec,
      // n grants span n - 1 gaps.
      achievedPerSec: ((grants.length - 1) * 1000) / Math.max(1, last - first),
      steadyPerSec:
        ((inner.length - 1) * 1000) / Math.max(1, (inner.at(-1) ?? 0) - (inner[0] ?? 0)),
      maxInAnySecond,
      arrivalsMaxInAnySecond: maxInAnyWindow(
        site.hitsOf("/site").map((h) => h.at),
        1000,
      ),
      waitP50Ms: percentile(waits, 50),
      waitP99Ms: percentile(waits, 99),
      seconds,
    };
  } finally {
    await Promise.all(workers.map((w) => w.kill("SIGTERM")));
    await backend.close();
    await database.close();
    await site.close();
    await redis?.stop();
  }
}

/** The two worker processes' settings. */
function workerEnv(
  url: string,
  limiter: W5Limiter,
  redisUrl: string,
  concurrencyPerWorker: number,
  limitPerSec: number,
): Record<string, string> {
  return {
    DATABASE_URL: url,
    RATE_LIMITER: limiter,
    REDIS_URL: redisUrl,
    WORKER_CONCURRENCY: String(concurrencyPerWorker),
    CELLFLOW_RATE_LIMIT_PER_SECOND: String(limitPerSec),
    CELLFLOW_ALLOW_PRIVATE_NETWORK: "1",
    // The warm-up's sites are the measured table's first ones: the result cache would
    // answer those without a call, and W5 measures calls.
    CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS: "0",
  };
}

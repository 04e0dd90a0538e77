/**
 * Shared rate limits through real cells: enrichment cells run by two worker processes,
 * paced through one Redis or through their Postgres, never call a provider more often than the plan allows in any
 * one-second window; a Stop ends their wait at once, and their deadline ends it with the
 * deadline's message; and while credits are used up, auto-run does not fire paid groups.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { sleep } from "@/domain/sleep";
import { planLimits } from "@/limits/plans";
import { apiClient, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { cellCounts, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { maxInAnyWindow } from "../helpers/pacers";
import { waitFor } from "../helpers/processes";
import { type RedisServer, startRedis } from "../helpers/redis";
import { metaTable } from "../helpers/tables";
import { spawnWorker } from "../helpers/workers";

let url: string;
let ep: Endpoint;
let redis: RedisServer;
const db = () => getDatabase().db;

beforeAll(async () => {
  ({ url } = await useTestDatabase());
  ep = await startEndpoint();
  redis = await startRedis();
}, 60_000);
afterAll(async () => {
  await ep.close();
  await redis.stop();
});

/** When the limiter granted each cell's provider call, and how long it waited (details). */
async function grantsOf(tableId: string): Promise<{ at: number; waitedMs: number }[]> {
  const rows = await queryRows<{ at: string; waited: string }>(
    db(),
    sql`select details->'providers'->0->'rateLimit'->>'at' as at,
               details->'providers'->0->'rateLimit'->>'waitedMs' as waited
          from cells where table_id = ${tableId} and status = 'completed'`,
  );
  return rows.map((r) => ({ at: Number(r.at), waitedMs: Number(r.waited) }));
}

describe("rate limits through cells", () => {
  it.each([
    ["Redis", () => ({ REDIS_URL: redis.url })],
    ["their Postgres (the default)", () => ({})],
  ])(
    "50 concurrent attempts at 10/s over two worker processes sharing %s never exceed 10 calls in any one-second window",
    async (_store, limiterEnv) => {
      ep.on("/site", async () => ({
        status: 200,
        body: "<title>t</title>",
        headers: { "content-type": "text/html" },
      }));
      const ws = await newWorkspace("paced");
      // pro: a window of 50 rows, so all 50 attempts are in flight and paced at once.
      await db().execute(sql`update workspaces set plan = 'pro' where id = ${ws.id}`);
      const limit = 10;
      const env = { ...limiterEnv(), CELLFLOW_RATE_LIMIT_PER_SECOND: String(limit) };
      const workers = await Promise.all([spawnWorker(url, 25, env), spawnWorker(url, 25, env)]);
      ep.hits.length = 0;
      try {
        const tableId = await metaTable(ws.key, { siteUrl: ep.url, rows: 50 });
        const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
          params: { path: { id: tableId } },
          body: { mode: "all" },
        });
        expect(await waitForDispatch(ws.key, tableId, startedRun(run).dispatchId, 90_000)).toBe(
          "completed",
        );
        const errors = await queryRows<{ error: string }>(
          db(),
          sql`select error from cells where table_id = ${tableId} and status = 'error'`,
        );
        expect(errors).toEqual([]);
        expect(await cellCounts(tableId)).toEqual({ completed: 50 });
        // Each cell's details say when the shared limiter (its store's clock) let its call go.
        const grants = await grantsOf(tableId);
        expect(grants).toHaveLength(50);
        expect(
          maxInAnyWindow(
            grants.map((g) => g.at),
            1_000,
          ),
        ).toBeLessThanOrEqual(limit);
        // Most of them waited in line, and said so.
        expect(grants.filter((g) => g.waitedMs > 0).length).toBeGreaterThan(limit);
        const times = ep
          .hitsOf("/site")
          .map((h) => h.at)
          .sort((a, b) => a - b);
        expect(times).toHaveLength(50);
        // Shared, not per process: 50 calls at 10/s need at least 4 s from the first to the
        // last, whatever the two processes do (two in-process limiters would allow twice the
        // rate: half the span). Arrivals lag their grants by up to a few hundred ms under
        // load, so the bound allows 0.5 s.
        const spanMs = (times.at(-1) ?? 0) - (times[0] ?? 0);
        expect(spanMs).toBeGreaterThanOrEqual(((50 - limit) / limit) * 1_000 - 500);
      } finally {
        // The next test's worker must be the only one, paced at its own rate.
        await Promise.all(workers.map((w) => w.kill()));
      }
    },
    120_000,
  );

  it("a Stop lands on cells waiting for the rate limit: they end cancelled at once, and no further call goes out", async () => {
    ep.on("/slow-site", async () => ({
      status: 200,
      body: "<title>t</title>",
      headers: { "content-type": "text/html" },
    }));
    const ws = await newWorkspace("stopped-paced");
    await db().execute(sql`update workspaces set plan = 'pro' where id = ${ws.id}`);
    // One call a second: twenty cells queue behind the limit for many seconds.
    const worker = await spawnWorker(url, 20, {
      REDIS_URL: redis.url,
      CELLFLOW_RATE_LIMIT_PER_SECOND: "1",
    });
    // The next test's worker must be the only one, paced at its own rate and deadline.
    onTestFinished(() => worker.kill());
    const tableId = await metaTable(ws.key, { siteUrl: ep.url, rows: 20, path: "/slow-site" });
    const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all" },
    });
    // Wait until a call went out and the rest are in flight, waiting.
    expect(
      await waitFor(async () => {
        const counts = await cellCounts(tableId);
        return ep.hitsOf("/slow-site").length >= 1 && (counts.running ?? 0) >= 15;
      }, 30_000),
    ).toBe(true);
    const stopped = await apiClient(ws.key).POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id: tableId } },
      body: { dispatchId: startedRun(run).dispatchId },
    });
    expect(stopped.response.status).toBe(200);
    const callsAtStop = ep.hitsOf("/slow-site").length;
    // Every paced attempt hears the Stop and ends: its carrier lets go of the row lock.
    expect(
      await waitFor(async () => {
        const rows = await queryRows<{ n: number }>(
          db(),
          sql`select count(*)::int as n from pg_locks
               where locktype = 'advisory' and granted
                 and database = (select oid from pg_database where datname = current_database())`,
        );
        return (rows[0]?.n ?? 0) === 0;
      }, 10_000),
    ).toBe(true);
    const counts = await cellCounts(tableId);
    expect(counts.running ?? 0).toBe(0);
    expect(counts.queued ?? 0).toBe(0);
    // A call already granted may still land (at most one in the second it was granted);
    // nothing waiting in line goes out after the Stop.
    await sleep(2_500);
    expect(ep.hitsOf("/slow-site").length).toBeLessThanOrEqual(callsAtStop + 1);
  }, 60_000);

  it("a cell whose deadline passes while it waits its turn ends with the deadline's message, not a rate-limit one", async () => {
    const ws = await newWorkspace("deadline-paced");
    await db().execute(sql`update workspaces set plan = 'pro' where id = ${ws.id}`);
    // One call a second and 2.5 s per attempt: of eight cells waiting at once, only the
    // first two or three can have their turn in time.
    const worker = await spawnWorker(url, 8, {
      CELLFLOW_RATE_LIMIT_PER_SECOND: "1",
      CELLFLOW_ATTEMPT_TIMEOUT_MS: "2500",
    });
    try {
      const tableId = await metaTable(ws.key, { siteUrl: ep.url, rows: 8, path: "/site" });
      const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all" },
      });
      expect(await waitForDispatch(ws.key, tableId, startedRun(run).dispatchId, 30_000)).toBe(
        "completed",
      );
      const ends = await queryRows<{ status: string; error: string | null; n: number }>(
        db(),
        sql`select status::text as status, error, count(*)::int as n from cells
             where table_id = ${tableId} group by 1, 2`,
      );
      const completed = ends.find((e) => e.status === "completed")?.n ?? 0;
      const errors = ends.filter((e) => e.status === "error");
      expect(completed).toBeGreaterThanOrEqual(1);
      expect(errors.map((e) => e.error)).toEqual(["Timed out after 2.5 s"]);
      expect(completed + (errors[0]?.n ?? 0)).toBe(8);
    } finally {
      await worker.kill();
    }
  }, 60_000);

  it("while the month's credits are used up, auto-run does not fire paid groups", async () => {
    const ws = await newWorkspace("spent");
    const cap = planLimits("free").monthlyCredits ?? 0;
    await db().execute(
      sql`update workspaces set plan = 'free', used_milli = ${cap * 1000},
                 credits_month = date_trunc('month', now() at time zone 'utc')::date where id = ${ws.id}`,
    );
    const tableId = await metaTable(ws.key, {
      siteUrl: ep.url,
      rows: 0,
      group: { dependsOn: ["url"], autoRun: true },
    });
    await apiClient(ws.key).POST("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
      body: { rows: [{ data: { url: `${ep.url}/site?spent=1` } }] },
    });
    expect(await cellCounts(tableId)).toEqual({});
    // Credits back (a new month): the next insert fires again.
    await db().execute(sql`update workspaces set used_milli = 0 where id = ${ws.id}`);
    await apiClient(ws.key).POST("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
      body: { rows: [{ data: { url: `${ep.url}/site?back=1` } }] },
    });
    const counts = await cellCounts(tableId);
    expect(Object.values(counts).reduce((n, c) => n + c, 0)).toBe(1);
  }, 60_000);
});

/**
 * Shared rate limits through real cells: enrichment cells run by two worker processes,
 * paced through one Redis, never call a provider more often than the plan allows in any
 * one-second window; and while credits are used up, auto-run does not fire paid groups.
 */

import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client";
import { getDatabase } from "../../db/instance";
import { planLimits } from "../../src/limits/plans";
import { call } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { cellCounts, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { type RedisServer, startRedis } from "../helpers/redis";
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

/** A table whose one group is website_meta over a `url` column, with `rows` rows. */
async function sitesTable(key: string, rows: number, autoRun = false): Promise<string> {
  const t = await call<{ id: string }>("POST", "/api/tables", {
    key,
    body: {
      name: "sites",
      columns: [
        { id: "url", name: "URL", type: "text" },
        { id: "title", name: "Title", type: "text" },
      ],
      groups: [
        {
          id: "meta",
          name: "Meta",
          kind: "enrichment",
          enrichmentId: "website_meta",
          inputs: { url: "url" },
          outputs: [{ columnId: "title", from: "title" }],
          ...(autoRun ? { dependsOn: ["url"], autoRun: true } : {}),
        },
      ],
    },
  });
  if (rows > 0)
    await call("POST", `/api/tables/${t.body.id}/rows`, {
      key,
      body: {
        rows: Array.from({ length: rows }, (_, i) => ({ data: { url: `${ep.url}/site?i=${i}` } })),
      },
    });
  return t.body.id;
}

describe("rate limits through cells", () => {
  it("two worker processes sharing one Redis pace their cells to one plan rate, none erroring", async () => {
    ep.on("/site", async () => ({
      status: 200,
      body: "<title>t</title>",
      headers: { "content-type": "text/html" },
    }));
    const ws = await newWorkspace("paced");
    await db().execute(sql`update workspaces set plan = 'free' where id = ${ws.id}`);
    const limit = planLimits("free").rateLimitPerSecond;
    await Promise.all([
      spawnWorker(url, 10, { REDIS_URL: redis.url }),
      spawnWorker(url, 10, { REDIS_URL: redis.url }),
    ]);
    const tableId = await sitesTable(ws.key, 30);
    const run = await call<{ dispatchId: string }>("POST", `/api/tables/${tableId}/runs`, {
      key: ws.key,
      body: { mode: "all" },
    });
    expect(await waitForDispatch(ws.key, tableId, run.body.dispatchId, 90_000)).toBe("completed");
    const errors = await queryRows<{ error: string }>(
      db(),
      sql`select error from cells where table_id = ${tableId} and status = 'error'`,
    );
    expect(errors).toEqual([]);
    expect(await cellCounts(tableId)).toEqual({ completed: 30 });
    const times = ep
      .hitsOf("/site")
      .map((h) => h.at)
      .sort((a, b) => a - b);
    expect(times).toHaveLength(30);
    // Shared, not per process: 30 calls at `limit`/s need at least (30 − limit) / limit
    // seconds between the first and the last, whatever the two processes do (two
    // in-process limiters would allow twice the rate: half the span). Arrivals, not
    // grants, are what the endpoint sees: they lag the grant by up to a few hundred ms
    // under load, so the bound allows 0.5 s. Per-second strictness of the grants
    // themselves is checked in rate-limit.test.ts.
    const spanMs = (times.at(-1) ?? 0) - (times[0] ?? 0);
    expect(spanMs).toBeGreaterThanOrEqual(((30 - limit) / limit) * 1_000 - 500);
  }, 120_000);

  it("while the month's credits are used up, auto-run does not fire paid groups", async () => {
    const ws = await newWorkspace("spent");
    const cap = planLimits("free").monthlyCredits ?? 0;
    await db().execute(
      sql`update workspaces set plan = 'free', credits_used = ${cap},
                 credits_month = date_trunc('month', now() at time zone 'utc')::date where id = ${ws.id}`,
    );
    const tableId = await sitesTable(ws.key, 0, true);
    await call("POST", `/api/tables/${tableId}/rows`, {
      key: ws.key,
      body: { rows: [{ data: { url: `${ep.url}/site?spent=1` } }] },
    });
    expect(await cellCounts(tableId)).toEqual({});
    // Credits back (a new month): the next insert fires again.
    await db().execute(sql`update workspaces set credits_used = 0 where id = ${ws.id}`);
    await call("POST", `/api/tables/${tableId}/rows`, {
      key: ws.key,
      body: { rows: [{ data: { url: `${ep.url}/site?back=1` } }] },
    });
    const counts = await cellCounts(tableId);
    expect(Object.values(counts).reduce((n, c) => n + c, 0)).toBe(1);
  }, 60_000);
});

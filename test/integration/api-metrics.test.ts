/**
 * `GET /api/metrics` (API.md "Limits, metrics, system"), scraped through the route and read
 * with a real parser of the exposition format: its token (the metrics token, else the
 * admin token, else no route), and a run carried by two `npm run worker` processes whose
 * series move in the sum — carriers running and cells running while the provider holds
 * its answers, then the cells completed, the claims, the attempts by group kind, the
 * provider calls, the limiter's waits and the credits, each once per cell whichever
 * process ran it — and which do not go back when a worker stops.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { METRIC } from "@/metrics/registry";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { type Exposition, parseExposition } from "../helpers/prom-text";
import { metaTable } from "../helpers/tables";
import { spawnWorker } from "../helpers/workers";

const TOKEN = "metrics-test-token";
const ADMIN = "metrics-test-admin";
let url: string;
let ep: Endpoint;

beforeAll(async () => {
  ({ url } = await useTestDatabase());
  ep = await startEndpoint();
}, 60_000);
afterAll(() => ep.close());
afterEach(() => {
  delete process.env.CELLFLOW_METRICS_TOKEN;
  delete process.env.CELLFLOW_ADMIN_TOKEN;
});

const get = (token: string) => apiClient(token).GET("/api/metrics", { parseAs: "text" });

async function scrape(token = TOKEN): Promise<Exposition> {
  const r = await get(token);
  expect(r.response.status).toBe(200);
  expect(r.response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(dataOf(r));
}

/** Scrapes until `check` holds on a scrape (the workers flush every 200 ms); returns that scrape. */
async function scrapeUntil(
  check: (m: Exposition) => boolean,
  timeoutMs = 30_000,
): Promise<Exposition> {
  let last: Exposition | undefined;
  const held = await waitFor(
    async () => {
      last = await scrape();
      return check(last);
    },
    timeoutMs,
    100,
  );
  if (!held || !last)
    throw new Error(`the scrape never held; the last one:\n${JSON.stringify(last?.samples)}`);
  return last;
}

describe("the token", () => {
  it("neither a metrics nor an admin token configured: the route does not exist (404)", async () => {
    const r = await get("anything");
    expect(r.response.status).toBe(404);
    expect(r.error).toMatchObject({ error: { code: "not_found" } });
  });

  it("only the admin token configured: it scrapes; anything else is a 401", async () => {
    process.env.CELLFLOW_ADMIN_TOKEN = ADMIN;
    expect((await scrape(ADMIN)).has(METRIC.queueDepth)).toBe(true);
    const wrong = await get("not-the-token");
    expect(wrong.response.status).toBe(401);
    expect(wrong.error).toMatchObject({ error: { code: "unauthorized" } });
    const none = await apiClient(null).GET("/api/metrics", { parseAs: "text" });
    expect(none.response.status).toBe(401);
  });

  it("a metrics token configured: only it scrapes, the admin token no longer does", async () => {
    process.env.CELLFLOW_ADMIN_TOKEN = ADMIN;
    process.env.CELLFLOW_METRICS_TOKEN = TOKEN;
    expect((await scrape(TOKEN)).has(METRIC.queueDepth)).toBe(true);
    expect((await get(ADMIN)).response.status).toBe(401);
    const key = (await newWorkspace("metrics-key")).key;
    expect((await get(key)).response.status).toBe(401);
  });
});

describe("a run carried by two worker processes", () => {
  it("moves the summed series as it proceeds, each cell counted once, and keeps them when a worker stops", async () => {
    process.env.CELLFLOW_METRICS_TOKEN = TOKEN;
    const rows = 8;
    // The provider holds every answer until the test lets them go: four held at once
    // means both workers (two carriers each) are carrying rows.
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    ep.on("/held", async () => {
      await released;
      return {
        status: 200,
        body: "<html><head><title>Held</title></head></html>",
        headers: { "content-type": "text/html" },
      };
    });
    const flushEvery = { CELLFLOW_METRICS_FLUSH_MS: "200" };
    const workers = await Promise.all([
      spawnWorker(url, 2, flushEvery),
      spawnWorker(url, 2, flushEvery),
    ]);
    const before = await scrapeUntil((m) => m.value(METRIC.processes, { kind: "worker" }) === 2);
    expect(before.types.get(METRIC.cells)).toBe("gauge");
    expect(before.types.get(METRIC.stampToRunning)).toBe("histogram");
    expect(before.types.get(METRIC.cellDuration)).toBe("histogram");
    expect(before.types.get(METRIC.providerCalls)).toBe("counter");
    expect(before.types.get(METRIC.rateLimitWait)).toBe("histogram");
    expect(before.types.get(METRIC.credits)).toBe("counter");
    // The Node process metrics, summed over the processes.
    expect(before.types.get("process_cpu_seconds_total")).toBe("counter");
    expect(before.value("process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(before.value(METRIC.carriersRunning)).toBe(0);
    expect(before.value(`${METRIC.stampToRunning}_count`)).toBe(0);

    const ws = await newWorkspace("metrics-run");
    const tableId = await metaTable(ws.key, { siteUrl: ep.url, path: "/held", rows });
    const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", window: rows },
    });
    expect(await waitFor(() => ep.hitsOf("/held").length >= 4, 30_000)).toBe(true);

    // Each process flushes its carriers gauge and its claims' histogram when its timer comes,
    // so one scrape can see a carrier started whose claim is not observed yet: wait for both.
    const during = await scrapeUntil(
      (m) =>
        m.value(METRIC.carriersRunning) === 4 &&
        m.value(METRIC.cells, { status: "running" }) === 4 &&
        m.value(`${METRIC.stampToRunning}_count`) >= 4,
    );
    expect(during.value(`${METRIC.stampToRunning}_count`)).toBe(4);
    expect(during.value(METRIC.cells, { status: "completed" })).toBe(0);
    expect(during.value(METRIC.queueDepth)).toBe(during.value(METRIC.cells, { status: "queued" }));
    expect(during.value(METRIC.queueDepth)).toBe(rows - 4);

    release();
    expect(await waitForDispatch(ws.key, tableId, startedRun(run).dispatchId)).toBe("completed");
    const after = await scrapeUntil(
      (m) =>
        m.value(METRIC.cells, { status: "completed" }) === rows &&
        m.value(`${METRIC.cellDuration}_count`) === rows &&
        m.value(METRIC.carriersRunning) === 0,
    );
    expect(after.value(METRIC.queueDepth)).toBe(0);
    expect(after.value(`${METRIC.stampToRunning}_count`)).toBe(rows);
    expect(
      after.value(`${METRIC.cellDuration}_count`, { kind: "enrichment", end: "completed" }),
    ).toBe(rows);
    // A histogram's +Inf bucket is its count.
    expect(
      after.value(`${METRIC.cellDuration}_bucket`, {
        kind: "enrichment",
        end: "completed",
        le: "+Inf",
      }),
    ).toBe(rows);
    expect(after.value(METRIC.providerCalls, { provider: "http_get", outcome: "found" })).toBe(
      rows,
    );
    expect(after.value(`${METRIC.rateLimitWait}_count`, { provider: "http_get" })).toBe(rows);
    expect(after.value(METRIC.credits, { source: "website_meta" })).toBe(rows);

    // Both processes flushed their part of the attempts: the sum is over two rows.
    const perProcess = await queryRows<{ kind: string; n: number }>(
      getDatabase().db,
      sql`select process_kind as kind, value as n from metric_series
           where name = ${`${METRIC.cellDuration}_count`} order by value`,
    );
    expect(perProcess).toHaveLength(2);
    expect(perProcess.every((p) => p.kind === "worker" && p.n > 0)).toBe(true);

    // A worker that stops retires its rows into `gone`: no counter goes back.
    await workers[0]?.kill("SIGTERM");
    const oneLeft = await scrapeUntil((m) => m.value(METRIC.processes, { kind: "worker" }) === 1);
    for (const name of [
      `${METRIC.cellDuration}_count`,
      `${METRIC.stampToRunning}_count`,
      METRIC.credits,
    ])
      expect(oneLeft.value(name), name).toBe(after.value(name));
    expect(oneLeft.value(METRIC.providerCalls)).toBe(after.value(METRIC.providerCalls));
    await workers[1]?.kill("SIGTERM");
  }, 120_000);
});

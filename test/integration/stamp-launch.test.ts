/**
 * A Run request on the local backend hands out its first window in its last stamping
 * page's transaction: the carriers' jobs exist only if that page commits, not before the
 * request's last page, and a Stop that waited for the page's lock on the run still holds
 * against the carriers it enqueued.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { Logger, runMigrations } from "graphile-worker";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { closeBackend, getBackend } from "@/backends/instance";
import { carrierSpec } from "@/backends/port";
import { readEnv } from "@/config/env";
import { log } from "@/config/log";
import { startRun } from "@/engine/dispatcher";
import { stopRuns } from "@/engine/stop";
import { startWorker } from "@/server/worker-runtime";
import { createDispatch } from "@/store/dispatches/create";
import { stampNextPage } from "@/store/dispatches/stamp-next";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { waitTable } from "../helpers/tables";

let key: string;
let url: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  url = (await useTestDatabase()).url;
  key = (await newWorkspace()).key;
  // graphile-worker's schema, which the job counts below read before any enqueue made it.
  await runMigrations({ connectionString: url, logger: new Logger(() => () => {}) });
  return () => closeBackend();
});

/** Carrier jobs waiting in graphile-worker's queue for this run. */
async function carrierJobs(dispatchId: string): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db(),
    sql`select count(*)::int as n from graphile_worker._private_jobs j
          join graphile_worker._private_tasks t on t.id = j.task_id
         where t.identifier = 'row-carrier' and j.payload->>'dispatchId' = ${dispatchId}`,
  );
  return r?.n ?? 0;
}

/** A run of group g0 (window 5) over `rowIds` (null: every row), created, not stamped. */
function runOf(tableId: string, rowIds: string[] | null = null): Promise<string> {
  return createDispatch(db(), {
    tableId,
    groupIds: ["g0"],
    mode: "all",
    rowIds,
    rowLimit: null,
    window: 5,
  });
}

async function cellsOf(tableId: string): Promise<{ status: string; started: boolean }[]> {
  return queryRows(
    db(),
    sql`select status, started_at is not null as started from cells where table_id = ${tableId}`,
  );
}

describe("the first window in the stamp's transaction", () => {
  it("is enqueued by the request's last page, not before it", async () => {
    const tableId = (await waitTable(key, { groups: 1, ms: 0, rows: 7, waitOnly: true })).id;
    const seen: number[] = [];
    let dispatchId = "";
    const run = await startRun(
      {
        db: db(),
        backend: getBackend(),
        pause: async (point, detail) => {
          if (point !== "run:page" && point !== "run:stamped") return;
          dispatchId = detail?.dispatchId ?? dispatchId;
          seen.push(await carrierJobs(dispatchId));
        },
      },
      { tableId, groupIds: ["g0"], mode: "all", rowIds: null, limit: null, window: 5, pageRows: 3 },
    );
    // Three pages (3 + 3 + 1 rows): no job before each of them; the window's 5 once stamped.
    expect(seen).toEqual([0, 0, 0, 5]);
    expect(run).toMatchObject({ stamped: 7, stamping: false });
    expect(await carrierJobs(run.dispatchId)).toBe(5);
    // Each is the carrier's spec for one of the first five rows (the job built in SQL from
    // it): its key, payload and single attempt.
    const jobs = await queryRows<{ key: string; payload: unknown; attempts: number }>(
      db(),
      sql`select j.key, j.payload, j.max_attempts as attempts from graphile_worker._private_jobs j
           where j.payload->>'dispatchId' = ${run.dispatchId} order by j.key`,
    );
    const first = await queryRows<{ id: string }>(
      db(),
      sql`select id from rows where table_id = ${tableId} order by position limit 5`,
    );
    const specs = first
      .map((r) => carrierSpec({ tableId, rowId: r.id, dispatchId: run.dispatchId }))
      .sort((a, b) => (a.idempotencyKey < b.idempotencyKey ? -1 : 1));
    expect(jobs).toEqual(
      specs.map((s) => ({ key: s.idempotencyKey, payload: s.payload, attempts: 1 })),
    );
    await stopRuns({ db: db(), backend: getBackend() }, { tableId });
  });

  it("leaves no job when the page's transaction rolls back", async () => {
    const tableId = (await waitTable(key, { groups: 1, ms: 0, rows: 3, waitOnly: true })).id;
    const dispatchId = await runOf(tableId);
    const backend = getBackend();
    const launchWindowIn = backend.launchWindowIn?.bind(backend);
    expect(launchWindowIn).toBeDefined();
    await expect(
      stampNextPage(db(), dispatchId, 10, async (tx) => {
        const launched = await launchWindowIn?.(tx, dispatchId, (rowId) =>
          carrierSpec({ tableId, rowId, dispatchId }),
        );
        expect(launched?.rowIds).toHaveLength(3);
        expect(await carrierJobs(dispatchId)).toBe(0);
        throw new Error("the page fails after its enqueue");
      }),
    ).rejects.toThrow("the page fails after its enqueue");
    expect(await carrierJobs(dispatchId)).toBe(0);
    expect(await cellsOf(tableId)).toEqual([]);
  });

  it("a window with nothing to hand out adds no job and wakes no worker", async () => {
    const tableId = (await waitTable(key, { groups: 1, ms: 0, rows: 1, waitOnly: true })).id;
    // A run of a row that is not there: its page stamps nothing.
    const dispatchId = await runOf(tableId, ["r_none"]);
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    try {
      const heard: string[] = [];
      listener.on("notification", (n) => heard.push(n.payload ?? ""));
      await listener.query('listen "jobs:insert"');
      const backend = getBackend();
      await stampNextPage(db(), dispatchId, 10, async (tx) => {
        const launched = await backend.launchWindowIn?.(tx, dispatchId, (rowId) =>
          carrierSpec({ tableId, rowId, dispatchId }),
        );
        expect(launched?.rowIds).toEqual([]);
      });
      // Notices come in commit order: one sent after the page's commit arrives after any
      // the page sent.
      await db().execute(sql`select pg_notify('jobs:insert', 'marker')`);
      expect(await waitFor(async () => heard.includes("marker"), 10_000)).toBe(true);
      expect(heard).toEqual(["marker"]);
    } finally {
      await listener.end();
    }
    expect(await carrierJobs(dispatchId)).toBe(0);
  });

  it("holds a Stop that waited for the page: its carriers run nothing", async () => {
    const tableId = (await waitTable(key, { groups: 1, ms: 0, rows: 4, waitOnly: true })).id;
    const dispatchId = await runOf(tableId);
    const backend = getBackend();
    let stop: Promise<unknown> | undefined;
    await stampNextPage(db(), dispatchId, 10, async (tx) => {
      await backend.launchWindowIn?.(tx, dispatchId, (rowId) =>
        carrierSpec({ tableId, rowId, dispatchId }),
      );
      // The Stop starts while the page holds the run's row, and waits for it.
      stop = stopRuns({ db: db(), backend }, { tableId });
      const waiting = await waitFor(async () => {
        const [w] = await queryRows<{ n: number }>(
          db(),
          sql`select count(*)::int as n from pg_stat_activity
               where datname = current_database() and wait_event_type = 'Lock'`,
        );
        return (w?.n ?? 0) > 0;
      }, 30_000);
      expect(waiting).toBe(true);
    });
    await stop;
    expect(await carrierJobs(dispatchId)).toBe(4);
    // Now a worker takes the jobs the page enqueued: none of them claims a cell.
    const env = readEnv();
    const worker = await startWorker({
      url,
      driver: env.DATABASE_DRIVER,
      neonWsProxy: env.NEON_WS_PROXY,
      concurrency: 4,
      log: log(),
    });
    try {
      expect(await waitFor(async () => (await carrierJobs(dispatchId)) === 0, 30_000)).toBe(true);
    } finally {
      await worker.stop();
    }
    const cells = await cellsOf(tableId);
    expect(cells).toHaveLength(4);
    expect(cells.every((c) => c.status === "cancelled" && !c.started)).toBe(true);
  });
});

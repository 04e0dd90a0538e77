/**
 * Engine invariants with several real worker processes on one database.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getBackend } from "@/backends/instance";
import { carrierSpec } from "@/backends/port";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { cellCounts, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { waitTable } from "../helpers/tables";
import { spawnWorker, type WorkerProcess } from "../helpers/workers";

let key: string;
let url: string;
let workers: WorkerProcess[] = [];
const db = () => getDatabase().db;

beforeAll(async () => {
  ({ url } = await useTestDatabase());
  const ws = await newWorkspace();
  key = ws.key;
  await db().execute(sql`update workspaces set plan = 'pro' where id = ${ws.id}`);
  workers = await Promise.all([spawnWorker(url, 10), spawnWorker(url, 10)]);
}, 120_000);

describe("with two worker processes", () => {
  it("two carriers for one row never run groups of that row at the same time", async () => {
    const t = await waitTable(key, { groups: 3, ms: 15, rows: 40 });
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all", window: 40 },
    });
    // Duplicate carriers for every row, delivered to both processes.
    for (let i = 0; i < 3; i++) {
      await getBackend().enqueue(
        t.rowIds.map((rowId) => ({
          ...carrierSpec({ tableId: t.id, rowId }),
          idempotencyKey: `dup${i}:${rowId}`,
        })),
      );
    }
    expect(await waitForDispatch(key, t.id, startedRun(run).dispatchId)).toBe("completed");
    const events = await queryRows<{ row: string; exec: string; status: string; outputs: boolean }>(
      db(),
      sql`select data->>'rowId' as row, data->>'executionId' as exec, data->>'status' as status, data ? 'outputs' as outputs
            from events where table_id = ${t.id} and kind = 'cell' order by id`,
    );
    const active = new Map<string, string>();
    let overlaps = 0;
    for (const e of events) {
      const current = active.get(e.row);
      if (e.status === "running" && !e.outputs) {
        if (current && current !== e.exec) overlaps++;
        active.set(e.row, e.exec);
      } else if (e.status === "completed" || e.status === "error" || e.status === "cancelled") {
        if (current === e.exec) active.delete(e.row);
      }
    }
    expect(overlaps).toBe(0);
    expect(await cellCounts(t.id)).toEqual({ completed: 120 });
  }, 120_000);

  it("every cell of a dispatch ends terminal exactly once, the dispatch completes, in flight never exceeds the window", async () => {
    const window = 7;
    const t = await waitTable(key, { groups: 1, ms: 5, rows: 300 });
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all", window },
    });
    const d = startedRun(run).dispatchId;
    let maxRunning = 0;
    let maxHanded = 0;
    const sampled = await waitFor(
      async () => {
        const [s] = await queryRows<{ running: number; handed: number; status: string }>(
          db(),
          sql`select (select count(distinct row_id)::int from cells where dispatch_id = ${d} and status = 'running') as running,
                     (select count(distinct c.row_id)::int from cells c join dispatches x on x.id = c.dispatch_id
                       where c.dispatch_id = ${d} and c.status in ('queued', 'running') and c.row_position <= x."cursor") as handed,
                     (select status::text from dispatches where id = ${d}) as status`,
        );
        maxRunning = Math.max(maxRunning, s?.running ?? 0);
        maxHanded = Math.max(maxHanded, s?.handed ?? 0);
        return s?.status !== "active";
      },
      120_000,
      5,
    );
    expect(sampled).toBe(true);
    expect(maxRunning).toBeGreaterThan(1);
    expect(maxRunning).toBeLessThanOrEqual(window);
    expect(maxHanded).toBeLessThanOrEqual(window);
    const terminal = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from events where table_id = ${t.id} and kind = 'cell'
            and data->>'status' in ('completed', 'error', 'cancelled') group by data->>'rowId', data->>'groupId'`,
    );
    expect(terminal).toHaveLength(300);
    expect(terminal.every((x) => x.n === 1)).toBe(true);
    const view = await apiClient(key).GET("/api/tables/{id}/runs/{dispatchId}", {
      params: { path: { id: t.id, dispatchId: d } },
    });
    expect(dataOf(view)).toMatchObject({
      status: "completed",
      counts: { completed: 300, queued: 0, running: 0 },
    });
  }, 120_000);

  it("Stop on a 2,000-row dispatch leaves no queued or running cell, and none reappears while workers keep running", async () => {
    const t = await waitTable(key, { groups: 1, ms: 300, rows: 2000 });
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all", window: 20 },
    });
    expect(await waitFor(async () => ((await cellCounts(t.id)).running ?? 0) >= 5, 30_000)).toBe(
      true,
    );
    const stop = await apiClient(key).POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id: t.id } },
      body: {},
    });
    expect(stop.response.status).toBe(200);
    const after = await cellCounts(t.id);
    expect(after.queued ?? 0).toBe(0);
    expect(after.running ?? 0).toBe(0);
    expect(dataOf(stop).cancelled).toBe(2000 - (after.completed ?? 0));
    // Let every carrier already handed out run to its end, then look again.
    const drained = await waitFor(async () => {
      const [j] = await queryRows<{ n: number }>(
        db(),
        sql`select count(*)::int as n from graphile_worker.jobs`,
      );
      return j?.n === 0;
    }, 60_000);
    expect(drained).toBe(true);
    const later = await cellCounts(t.id);
    expect(later.queued ?? 0).toBe(0);
    expect(later.running ?? 0).toBe(0);
    expect(later.cancelled).toBe(after.cancelled);
    const view = await apiClient(key).GET("/api/tables/{id}/runs/{dispatchId}", {
      params: { path: { id: t.id, dispatchId: startedRun(run).dispatchId } },
    });
    expect(dataOf(view).status).toBe("cancelled");
  }, 180_000);

  it("Stop aborts attempts running in other worker processes at once (cancel channel)", async () => {
    const t = await waitTable(key, { groups: 1, ms: 120_000, rows: 6 });
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all", window: 6 },
    });
    expect(await waitFor(async () => ((await cellCounts(t.id)).running ?? 0) === 6, 30_000)).toBe(
      true,
    );
    const stoppedAt = Date.now();
    await apiClient(key).POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id: t.id } },
      body: {},
    });
    // Each attempt waits 2 minutes: the jobs can only finish this soon if the abort reached
    // the worker processes (this test process runs no worker).
    const drained = await waitFor(async () => {
      const [j] = await queryRows<{ n: number }>(
        db(),
        sql`select count(*)::int as n from graphile_worker.jobs`,
      );
      return j?.n === 0;
    }, 20_000);
    expect(drained).toBe(true);
    expect(Date.now() - stoppedAt).toBeLessThan(20_000);
    expect(await cellCounts(t.id)).toEqual({ cancelled: 6 });
  }, 120_000);

  it("a worker process killed with SIGKILL mid-cascade frees its row lock at once", async () => {
    const t = await waitTable(key, { groups: 1, ms: 60_000, rows: 1 });
    // Stop the others first and wait until their sessions are gone: the victim must be the
    // only worker, so the lock we watch can only be its.
    await Promise.all(workers.map((w) => w.kill("SIGTERM")));
    expect(
      await waitFor(async () => {
        const [a] = await queryRows<{ n: number }>(
          db(),
          sql`select count(*)::int as n from pg_stat_activity where application_name = 'cellflow-worker' and datname = current_database()`,
        );
        return a?.n === 0;
      }, 30_000),
    ).toBe(true);
    const victim = await spawnWorker(url, 2);
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all" },
    });
    const lockHolder = async () => {
      const rows = await queryRows<{ pid: number }>(
        db(),
        sql`select pid from pg_locks where locktype = 'advisory' and granted and objsubid = 1
              and pid in (select pid from pg_stat_activity where application_name = 'cellflow-worker' and datname = current_database())`,
      );
      return rows[0]?.pid ?? null;
    };
    expect(
      await waitFor(
        async () => (await lockHolder()) !== null && ((await cellCounts(t.id)).running ?? 0) === 1,
        30_000,
      ),
    ).toBe(true);
    const killedAt = Date.now();
    await victim.kill("SIGKILL");
    expect(await waitFor(async () => (await lockHolder()) === null, 5_000, 10)).toBe(true);
    expect(Date.now() - killedAt).toBeLessThan(5_000);
  }, 120_000);
});

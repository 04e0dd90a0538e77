/**
 * The re-drive heals what a dead worker left: its `running` cells (row locks freed by
 * the crash) run again exactly once, a queued cell nobody carries gets a carrier, and
 * passes racing each other do no work twice. (A cell lost too often: redrive-losses.)
 */

import { createDatabase, type Database, queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalBackend } from "@/backends/local";
import { log } from "@/config/log";
import { redriveOrphans } from "@/engine/redrive";
import { apiClient, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { cellCounts, redriveEngine, useWorker, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { waitTable } from "../helpers/tables";
import { spawnWorker } from "../helpers/workers";

let key: string;
let url: string;
const db = () => getDatabase().db;
const opened: { database: Database; backend: LocalBackend }[] = [];

/** What a second machine would have: its own pool and its own backend client. */
function machine(): { database: Database; backend: LocalBackend } {
  const m = { database: createDatabase({ url, poolMax: 5 }), backend: new LocalBackend(url) };
  opened.push(m);
  return m;
}

beforeAll(async () => {
  ({ url } = await useTestDatabase());
  const ws = await newWorkspace();
  key = ws.key;
});

afterAll(async () => {
  for (const m of opened) {
    await m.backend.close();
    await m.database.close();
  }
});

/** Sessions of worker processes on this database. */
const workerSessions = async () => {
  const [r] = await queryRows<{ n: number }>(
    db(),
    sql`select count(*)::int as n from pg_stat_activity
         where application_name = 'cellflow-worker' and datname = current_database()`,
  );
  return r?.n ?? 0;
};

describe("re-drive", () => {
  it("a queued cell whose carrier job was lost gets a new carrier, and a fresh one is left alone", async () => {
    const t = await waitTable(key, { groups: 1, ms: 10, rows: 2 });
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all" },
    });
    // Lose the jobs, age both rows' hand-out and one row's cell past the grace period.
    await db().execute(sql`delete from graphile_worker._private_jobs`);
    await db().execute(
      sql`update dispatches set prev_cursor_at = prev_cursor_at - interval '1 minute' where table_id = ${t.id}`,
    );
    await db().execute(
      sql`update cells set queued_at = now() - interval '1 minute' where row_id = ${t.rowIds[0]}`,
    );
    const report = await redriveOrphans(redriveEngine({ ...machine(), log: log() }));
    expect(report.carriers).toBe(1);
    const jobs = await queryRows<{ key: string }>(db(), sql`select key from graphile_worker.jobs`);
    expect(jobs.map((j) => j.key)).toEqual([`carrier:${t.id}:${t.rowIds[0]}`]);
    await db().execute(
      sql`update cells set queued_at = now() - interval '1 minute' where table_id = ${t.id}`,
    );
    const again = await redriveOrphans(redriveEngine({ ...machine(), log: log() }));
    expect(again.carriers).toBe(2);
    const after = await queryRows<{ key: string }>(
      db(),
      sql`select key from graphile_worker.jobs order by key`,
    );
    expect(after.map((j) => j.key)).toEqual(t.rowIds.map((r) => `carrier:${t.id}:${r}`).sort());
    expect(await cellCounts(t.id)).toEqual({ queued: 2 });
  }, 60_000);

  it("a worker stopped gracefully mid-run hands its cells back to the queue, with carriers", async () => {
    const t = await waitTable(key, { groups: 1, ms: 60_000, rows: 4 });
    const victim = await spawnWorker(url, 10);
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all", window: 4 },
    });
    expect(await waitFor(async () => (await cellCounts(t.id)).running === 4, 30_000)).toBe(true);
    await victim.kill("SIGTERM");
    // Not errors ("run it again"): the next worker picks them up where they were.
    expect(await cellCounts(t.id)).toEqual({ queued: 4 });
    const jobs = await queryRows<{ key: string }>(
      db(),
      sql`select key from graphile_worker.jobs where key like ${`carrier:${t.id}:%`} order by key`,
    );
    expect(jobs.map((j) => j.key)).toEqual(t.rowIds.map((r) => `carrier:${t.id}:${r}`).sort());
    // Out of the next test's way.
    await apiClient(key).POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id: t.id } },
      body: {},
    });
  }, 60_000);

  // Last: it starts a worker in this process, which then runs everything left.
  it("cells running in a SIGKILLed worker run again once each, even with two re-drives racing", async () => {
    // Long enough that all six are running at once even when a loaded machine (the neon
    // lane, through its proxy) starts the carriers seconds apart.
    const t = await waitTable(key, { groups: 1, ms: 5_000, rows: 6 });
    const victim = await spawnWorker(url, 10);
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all", window: 6 },
    });
    expect(await waitFor(async () => (await cellCounts(t.id)).running === 6, 30_000)).toBe(true);
    await victim.kill("SIGKILL");
    // Every session of the dead worker gone, not only its locks: through the neon lane's
    // WebSocket proxy a statement it sent just before dying can still reach a backend
    // that outlives the lock, and would claim a requeued cell (a dead carrier's late
    // write, not the re-drive doing work twice).
    expect(await waitFor(async () => (await workerSessions()) === 0, 10_000, 10)).toBe(true);
    expect(await cellCounts(t.id)).toEqual({ running: 6 });

    const [a, b] = [machine(), machine()];
    const reports = await Promise.all([
      redriveOrphans(redriveEngine({ ...a, log: log() })),
      redriveOrphans(redriveEngine({ ...b, log: log() })),
    ]);
    // Each of this table's cells handed back once between the two passes (a pass reads
    // every table: a cell of an earlier test's table the victim was running is an orphan
    // too, so the passes' total may be more).
    const requeues = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from events
           where table_id = ${t.id} and kind = 'cell' and data->>'status' = 'queued'
             and (data->>'attempt')::int = 1`,
    );
    expect(requeues[0]?.n).toBe(6);
    expect(reports.reduce((n, r) => n + r.requeued, 0)).toBeGreaterThanOrEqual(6);
    expect(await cellCounts(t.id)).toEqual({ queued: 6 });

    await useWorker(url, 10);
    expect(await waitForDispatch(key, t.id, startedRun(run).dispatchId)).toBe("completed");
    // Claimed once by the victim and once after the re-drive: no duplicate carrier claimed.
    const cells = await queryRows<{ attempt: number; status: string }>(
      db(),
      sql`select attempt, status::text from cells where table_id = ${t.id}`,
    );
    expect(cells).toEqual(Array.from({ length: 6 }, () => ({ attempt: 2, status: "completed" })));
    const terminal = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from events where table_id = ${t.id} and kind = 'cell'
            and data->>'status' in ('completed', 'error', 'cancelled') group by data->>'rowId'`,
    );
    expect(terminal).toEqual(Array.from({ length: 6 }, () => ({ n: 1 })));
  }, 120_000);
});

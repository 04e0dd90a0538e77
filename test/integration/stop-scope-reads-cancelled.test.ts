/**
 * A large Stop (more queued cells than the handle's `stopEagerUpTo`, lowered here so a
 * small table takes the path) records a cancel scope per run instead of rewriting its
 * queued cells. I1 is judged on what reads show: from the moment the Stop returns, reads,
 * progress and the run's counts show the covered cells `cancelled` (before any rewrite),
 * claims and the sweep leave them alone, the run ends `cancelled`, a new run re-stamps and
 * completes them, and the rewrite job empties the scope in batches with the counts equal to
 * a full count before, between and after its batches, resuming where an interrupted pass
 * stopped.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { runCarrier } from "@/engine/carrier";
import { rewriteCovered } from "@/engine/covered-rewrite-loop";
import { startRun } from "@/engine/dispatcher";
import { stopRuns } from "@/engine/stop";
import { orphanCandidates } from "@/store/cells/orphans";
import { readCell } from "@/store/cells/read-cell";
import { rewriteCoveredBatch } from "@/store/cells/rewrite-covered";
import { rowStep } from "@/store/cells/row-step";
import { getDispatch } from "@/store/dispatches/read";
import { readProgress } from "@/store/progress/read";
import { getRow } from "@/store/rows/read";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { engineDeps } from "../helpers/engine";
import { RecordingBackend, taskContext } from "../helpers/engine-harness";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { expectProgressExact, foldNow } from "../helpers/progress";
import { transformTable } from "../helpers/tables";

let key: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

const ROWS = 30;

async function table(groups: string[]): Promise<{ tableId: string; rowIds: string[] }> {
  return transformTable(key, { groups, rows: Array.from({ length: ROWS }, () => ({})) });
}

/** Runs what the engine enqueued (carriers) as a worker would, until nothing is left. */
async function drain(backend: RecordingBackend): Promise<void> {
  for (let jobs = backend.take(); jobs.length > 0; jobs = backend.take())
    for (const job of jobs)
      if (job.task === "row-carrier")
        await runCarrier(
          engineDeps({ database: getDatabase(), backend }),
          job.payload,
          taskContext(),
        );
}

/** The stored statuses (what the rewrite has not reached yet stays `queued` here). */
async function stored(tableId: string): Promise<Record<string, number>> {
  const rows = await queryRows<{ status: string; n: number }>(
    db(),
    sql`select status::text as status, count(*)::int as n from cells where table_id = ${tableId} group by 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** A full count of what reads show, per group and status. */
async function fullCount(tableId: string): Promise<Record<string, Record<string, number>>> {
  const rows = await queryRows<{ groupId: string; status: string; n: number }>(
    db(),
    sql`select group_id as "groupId",
               cellflow_cell_status(status, dispatch_id, row_id, group_id)::text as status, count(*)::int as n
          from cells where table_id = ${tableId} group by 1, 2`,
  );
  const out: Record<string, Record<string, number>> = {};
  for (const r of rows) out[r.groupId] = { ...out[r.groupId], [r.status]: r.n };
  return out;
}

async function scopes(tableId: string): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db(),
    sql`select count(*)::int as n from cancel_scopes where table_id = ${tableId}`,
  );
  return r?.n ?? 0;
}

/** A run of every row, stamped and its window handed out (the carriers not run), then a large Stop. */
async function stoppedRun(groups: string[]) {
  const { tableId, rowIds } = await table(groups);
  const backend = new RecordingBackend();
  const run = await startRun(
    { db: db(), backend },
    { tableId, groupIds: groups, mode: "all", rowIds: null, limit: null, window: 5 },
  );
  const stop = await stopRuns({ db: db(), backend, stopEagerUpTo: 3 }, { tableId });
  return { tableId, rowIds, backend, dispatchId: run.dispatchId, stop };
}

describe("a large Stop's covered cells read as cancelled from its return", () => {
  it("reads, progress and the run's counts show them cancelled before any rewrite, and the run ends cancelled", async () => {
    const { tableId, rowIds, dispatchId, stop } = await stoppedRun(["g"]);
    expect(stop.cancelled).toBe(ROWS);
    // Nothing was rewritten: the scope covers them.
    expect(await stored(tableId)).toEqual({ queued: ROWS });
    expect(await scopes(tableId)).toBe(1);

    const row = await getRow(db(), tableId, rowIds[0] as string);
    expect(row?.cells.g?.status).toBe("cancelled");
    const cell = await readCell(db(), { tableId, rowId: rowIds[7] as string, groupId: "g" });
    expect(cell?.status).toBe("cancelled");
    const listed = dataOf(
      await apiClient(key).GET("/api/tables/{id}/rows", { params: { path: { id: tableId } } }),
    );
    expect(listed.rows.map((r) => r.cells.g?.status)).toEqual(Array(ROWS).fill("cancelled"));

    const progress = await readProgress(db(), { tableId });
    expect(progress?.groups[0]).toMatchObject({ queued: 0, running: 0, cancelled: ROWS });
    await expectProgressExact(db(), tableId);

    const run = await getDispatch(db(), tableId, dispatchId);
    expect(run?.status).toBe("cancelled");
    expect(run?.counts).toMatchObject({ queued: 0, running: 0, cancelled: ROWS });
  });

  it("the carriers of the handed-out rows claim nothing, and the sweep does not re-drive the covered cells", async () => {
    const { tableId, rowIds, backend } = await stoppedRun(["g"]);
    // The window's carriers were enqueued before the Stop: they run now.
    expect(backend.jobs.some((j) => j.task === "row-carrier")).toBe(true);
    await drain(backend);
    expect(await stored(tableId)).toEqual({ queued: ROWS });
    // A claim made directly loses its race: nothing claimed.
    const step = await rowStep(db(), {
      tableId,
      rowId: rowIds[10] as string,
      claim: { schemaVersion: 1, order: ["g"], runId: null },
    });
    expect(step.claimed).toBeNull();
    expect(step.step?.queued).toEqual([]);
    // Stale as far as the sweep can tell (stamped long ago, their run over): still not its.
    await db().execute(
      sql`update cells set queued_at = now() - interval '1 hour' where table_id = ${tableId}`,
    );
    const candidates = await orphanCandidates(db(), { limit: 10_000 });
    expect(candidates.filter((c) => c.tableId === tableId)).toEqual([]);
    await expectProgressExact(db(), tableId);
  });

  it("a new run after the Stop re-stamps the covered cells, and they run to completion", async () => {
    const { tableId } = await stoppedRun(["g"]);
    const backend = new RecordingBackend();
    const again = await startRun(
      { db: db(), backend },
      { tableId, groupIds: ["g"], mode: "incomplete", rowIds: null, limit: null, window: 5 },
    );
    expect(again.stamped).toBe(ROWS);
    await expectProgressExact(db(), tableId);
    await drain(backend);
    expect(await stored(tableId)).toEqual({ completed: ROWS });
    expect((await getDispatch(db(), tableId, again.dispatchId))?.status).toBe("completed");
    await expectProgressExact(db(), tableId);
    // Nothing of the old scope is left to cover: the rewrite finds no cell of it (other
    // tests' scopes it rewrites too).
    await rewriteCovered({ db: db(), backend });
    expect(await scopes(tableId)).toBe(0);
    expect(await stored(tableId)).toEqual({ completed: ROWS });
  });

  it("the rewrite empties the scope in batches, the counts exact between batches, and resumes after an interruption", async () => {
    // Other tests' scopes first, so the batches below are this table's.
    await rewriteCovered({ db: db(), backend: new RecordingBackend() });
    const { tableId, rowIds } = await stoppedRun(["g", "h"]);
    expect(await stored(tableId)).toEqual({ queued: 2 * ROWS });
    await expectProgressExact(db(), tableId);
    // One batch, then the pass is "interrupted" (no more batches from it).
    const first = await rewriteCoveredBatch(db(), 25);
    expect(first).toMatchObject({ rewritten: 25, done: false });
    expect(await stored(tableId)).toEqual({ queued: 2 * ROWS - 25, cancelled: 25 });
    await expectProgressExact(db(), tableId);
    const row = await getRow(db(), tableId, rowIds[ROWS - 1] as string);
    expect([row?.cells.g?.status, row?.cells.h?.status]).toEqual(["cancelled", "cancelled"]);
    // A new pass finds the rest in the table.
    let batches = 0;
    while ((await scopes(tableId)) > 0 && batches++ < 10) {
      await rewriteCoveredBatch(db(), 25);
      await expectProgressExact(db(), tableId);
    }
    expect(await stored(tableId)).toEqual({ cancelled: 2 * ROWS });
    expect(await scopes(tableId)).toBe(0);
    await expectProgressExact(db(), tableId);
  });

  it("a Stop of one group of a run covers that group only; the run goes on with the other and completes before the rewrite", async () => {
    const { tableId } = await table(["g", "h"]);
    const backend = new RecordingBackend();
    const run = await startRun(
      { db: db(), backend },
      { tableId, groupIds: ["g", "h"], mode: "all", rowIds: null, limit: null, window: 5 },
    );
    const stop = await stopRuns(
      { db: db(), backend, stopEagerUpTo: 3 },
      { tableId, groupIds: ["g"] },
    );
    expect(stop.cancelled).toBe(ROWS);
    const progress = await readProgress(db(), { tableId });
    expect(progress?.groups.map((g) => [g.groupId, g.cancelled, g.queued])).toEqual([
      ["g", ROWS, 0],
      ["h", 0, ROWS],
    ]);
    expect((await getDispatch(db(), tableId, run.dispatchId))?.status).toBe("active");
    // The window goes on over `h` before any rewrite: the covered `g` cells hold no slot
    // of it, get no carrier, and do not keep the run from completing.
    await drain(backend);
    expect(await stored(tableId)).toEqual({ queued: ROWS, completed: ROWS });
    expect((await getDispatch(db(), tableId, run.dispatchId))?.status).toBe("completed");
    await expectProgressExact(db(), tableId);
    await rewriteCovered({ db: db(), backend });
    await drain(backend);
    expect(await stored(tableId)).toEqual({ cancelled: ROWS, completed: ROWS });
    expect((await getDispatch(db(), tableId, run.dispatchId))?.status).toBe("completed");
    await expectProgressExact(db(), tableId);
  });

  /**
   * A run of groups g and h, stamped and its counts folded, with the run's counter of g's
   * queued cells then made 100 too high: an answer that comes off the counters shows it,
   * one that counts the cells does not. `counted`: whether the run's group counters are
   * complete (false: a run made before them).
   */
  async function miscounted(counted: boolean) {
    const { tableId } = await table(["g", "h"]);
    const backend = new RecordingBackend();
    const run = await startRun(
      { db: db(), backend },
      { tableId, groupIds: ["g", "h"], mode: "all", rowIds: null, limit: null, window: 5 },
    );
    await foldNow(db());
    await db().execute(
      sql`update run_group_cell_counts set n = n + 100
           where dispatch_id = ${run.dispatchId} and group_id = 'g' and status = 'queued'`,
    );
    await db().execute(
      sql`update dispatches set group_counted = ${counted} where id = ${run.dispatchId}`,
    );
    return { tableId, backend };
  }

  it("a Stop of some groups of a run, or of a run of several groups, takes its number off the run's counters per group, reading no cell", async () => {
    const one = await miscounted(true);
    const stop = await stopRuns(
      { db: db(), backend: one.backend, stopEagerUpTo: 3 },
      { tableId: one.tableId, groupIds: ["g"] },
    );
    // What the window bounds (5 rows handed out) is cancelled cell by cell beside the scope.
    expect(stop.cancelled).toBe(ROWS + 100);
    const both = await miscounted(true);
    const all = await stopRuns(
      { db: db(), backend: both.backend, stopEagerUpTo: 3 },
      { tableId: both.tableId },
    );
    expect(all.cancelled).toBe(2 * ROWS + 100);
  });

  it("a run made before the group counters is counted cell by cell", async () => {
    const { tableId, backend } = await miscounted(false);
    const stop = await stopRuns(
      { db: db(), backend, stopEagerUpTo: 3 },
      { tableId, groupIds: ["g"] },
    );
    expect(stop.cancelled).toBe(ROWS);
    await expectProgressExact(db(), tableId);
  });

  /** Some session waits for the table's scope lock (a Stop or a claim blocked on it). */
  const waitsOnScopeLock = (tableId: string) =>
    waitFor(async () => {
      const [r] = await queryRows<{ n: number }>(
        db(),
        sql`select count(*)::int as n from pg_locks
             where locktype = 'advisory' and not granted and objid::bigint = (hashtext(${tableId})::bigint & 4294967295)`,
      );
      return (r?.n ?? 0) > 0;
    }, 10_000);

  it("a claim that holds the scope lock when the Stop comes commits first: the Stop cancels it as running, counted once", async () => {
    const { tableId, rowIds } = await table(["g"]);
    const backend = new RecordingBackend();
    await startRun(
      { db: db(), backend },
      { tableId, groupIds: ["g"], mode: "all", rowIds: null, limit: null, window: 5 },
    );
    const claimer = await getDatabase().pool.connect();
    try {
      await claimer.query("begin");
      await claimer.query("select cellflow_scope_lock_shared($1)", [tableId]);
      const stopping = stopRuns({ db: db(), backend, stopEagerUpTo: 3 }, { tableId });
      expect(await waitsOnScopeLock(tableId)).toBe(true);
      await claimer.query(
        "update cells set status = 'running', attempt = attempt + 1 where row_id = $1 and group_id = 'g' and status = 'queued'",
        [rowIds[0]],
      );
      await claimer.query("commit");
      const stop = await stopping;
      expect(stop.cancelled).toBe(ROWS);
    } finally {
      claimer.release();
    }
    expect(await stored(tableId)).toEqual({ queued: ROWS - 1, cancelled: 1 });
    expect((await fullCount(tableId)).g).toEqual({ cancelled: ROWS });
    await expectProgressExact(db(), tableId);
  });

  it("a claim that waited for the Stop's scope lock sees the scope it committed, with its older snapshot, and claims nothing", async () => {
    const { tableId, rowIds } = await table(["g"]);
    const backend = new RecordingBackend();
    const run = await startRun(
      { db: db(), backend },
      { tableId, groupIds: ["g"], mode: "all", rowIds: null, limit: null, window: 5 },
    );
    // A Stop's transaction as far as its scope: the lock, then the scope row.
    const stopper = await getDatabase().pool.connect();
    try {
      await stopper.query("begin");
      await stopper.query("select cellflow_scope_lock($1)", [tableId]);
      await stopper.query("insert into cancel_scopes (table_id, dispatch_id) values ($1, $2)", [
        tableId,
        run.dispatchId,
      ]);
      const claiming = rowStep(db(), {
        tableId,
        rowId: rowIds[0] as string,
        claim: { schemaVersion: 1, order: ["g"], runId: null },
      });
      expect(await waitsOnScopeLock(tableId)).toBe(true);
      await stopper.query("commit");
      const step = await claiming;
      expect(step.claimed).toBeNull();
    } finally {
      stopper.release();
    }
    expect(await stored(tableId)).toEqual({ queued: ROWS });
  });
});

/**
 * Races between the engine's writers that single-statement guards alone do not settle:
 * a lost attempt's late writes against the attempt that replaced it, deadlocks between
 * a Stop and a carrier, and cells that keep arriving while a carrier releases its row.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { log } from "@/config/log";
import { AdvanceBatcher } from "@/engine/advance-batcher";
import { runCarrier } from "@/engine/carrier";
import { startRun } from "@/engine/dispatcher";
import type { Pause } from "@/engine/race-points";
import { redriveOrphans } from "@/engine/redrive";
import { acquireRowLock } from "@/engine/row-lock";
import { stopRuns } from "@/engine/stop";
import { failCell } from "@/store/cells/finish";
import { runningWithoutLock } from "@/store/cells/orphan-probe";
import { pauseAttempt } from "@/store/cells/pause-attempt";
import { writeProgress } from "@/store/cells/progress";
import { rowStep } from "@/store/cells/row-step";
import { stampPage } from "@/store/cells/stamp";
import { writeCheckpoint } from "@/store/executions/checkpoint";
import { apiClient } from "../helpers/api";
import { claimNext, completeCell } from "../helpers/cells";
import { someoneWaitsForALock, useTestDatabase } from "../helpers/db";
import { engineDeps, redriveEngine, resourcesOf } from "../helpers/engine";
import { everyPoint, RecordingBackend, taskContext } from "../helpers/engine-harness";
import { newWorkspace } from "../helpers/fixtures";
import { waitTable, workflowTable } from "../helpers/tables";

let key: string;
let url: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  url = (await useTestDatabase()).url;
  key = (await newWorkspace()).key;
});

async function cell(rowId: string, groupId: string) {
  const [c] = await queryRows<{ status: string; execution_id: string; attempt: number }>(
    db(),
    sql`select status::text as status, execution_id, attempt from cells where row_id = ${rowId} and group_id = ${groupId}`,
  );
  return c;
}

async function stamped(groups: number, rows: number) {
  const t = await waitTable(key, { groups, ms: 0, rows });
  await startRun(
    { db: db(), backend: new RecordingBackend() },
    {
      tableId: t.id,
      groupIds: Array.from({ length: groups }, (_, i) => `g${i}`),
      mode: "all",
      rowIds: null,
      limit: null,
      window: 10,
    },
  );
  return t;
}

describe("attempt fence", () => {
  it("a re-driven cell's next attempt rejects every late write of the attempt it replaced", async () => {
    const t = await stamped(1, 1);
    const rowId = t.rowIds[0] as string;
    const e = (await cell(rowId, "g0"))?.execution_id as string;
    // Attempt 1 claims without a row lock, as a carrier whose session then died.
    expect(await claimNext(db(), { tableId: t.id, rowId, groupId: "g0" })).toMatchObject({
      executionId: e,
      attempt: 1,
    });
    const backend = new RecordingBackend();
    const report = await redriveOrphans(
      redriveEngine({ database: getDatabase(), backend, log: log() }),
    );
    expect(report.requeued).toBe(1);
    expect(await claimNext(db(), { tableId: t.id, rowId, groupId: "g0" })).toMatchObject({
      executionId: e,
      attempt: 2,
    });
    // The same execution id, attempt 1: each of its writes arrives late and loses.
    const old = { executionId: e, attempt: 1 };
    const ref = { ...old, tableId: t.id, rowId, groupId: "g0" };
    const stale = { ok: false, reason: "stale" };
    const progress = { runningBlockIds: ["x"], blockErrors: {}, outputs: { c0: "late" } };
    expect(await writeProgress(db(), { ...ref, progress })).toEqual(stale);
    expect(
      await completeCell(db(), {
        ...ref,
        outcome: "ok",
        finish: { blockErrors: {}, outputs: { c0: "x" } },
      }),
    ).toEqual(stale);
    expect(await failCell(db(), { ...ref, message: "late", finish: { blockErrors: {} } })).toEqual(
      stale,
    );
    expect(await writeCheckpoint(db(), ref, "pause", { output: 1, taken: [] })).toBe(false);
    expect(
      await pauseAttempt(db(), {
        ...ref,
        pause: { blockId: "pause", reason: "approval", taken: [] },
      }),
    ).toBe(false);
    const step = await rowStep(db(), {
      tableId: t.id,
      rowId,
      finish: {
        groupId: "g0",
        ref: old,
        end: { kind: "complete", outcome: "ok", finish: { blockErrors: {}, outputs: {} } },
      },
    });
    expect(step.finished).toEqual(stale);
    expect(await cell(rowId, "g0")).toMatchObject({ status: "running", attempt: 2 });
    // Attempt 2 still owns the cell.
    const fresh = { executionId: e, attempt: 2 };
    expect(
      await completeCell(db(), {
        tableId: t.id,
        rowId,
        groupId: "g0",
        ...fresh,
        outcome: "ok",
        finish: { blockErrors: {}, outputs: {} },
      }),
    ).toEqual({ ok: true });
  });
});

/**
 * Another writer holding the row's g1 cell in an open transaction, which takes g0 when
 * told to: with a flow that locked g0 and waits for g1, that closes a cycle. The other
 * writer never detects the deadlock itself (its timeout is long): the flow's session
 * does, and its statement is the one rolled back.
 */
async function otherWriter(rowId: string) {
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  await other.query("begin");
  await other.query("set local deadlock_timeout = '30s'");
  await other.query("select 1 from cells where row_id = $1 and group_id = 'g1' for update", [
    rowId,
  ]);
  return {
    async closeCycle() {
      expect(await someoneWaitsForALock()).toBe(true);
      await other.query(
        "update cells set updated_at = now() where row_id = $1 and group_id = 'g0'",
        [rowId],
      );
      await other.query("commit");
    },
    end: () => other.end(),
  };
}

describe("deadlocks", () => {
  it("a Stop that deadlocks with another writer is run again, not answered with an error", async () => {
    const t = await stamped(2, 1);
    const rowId = t.rowIds[0] as string;
    const other = await otherWriter(rowId);
    try {
      // The Stop locks the row's cells in group order: g0, then waits for g1.
      const stop = stopRuns({ db: db(), backend: new RecordingBackend() }, { tableId: t.id });
      await other.closeCycle();
      expect(await stop).toEqual({ cancelled: 2 });
    } finally {
      await other.end();
    }
    expect((await cell(rowId, "g0"))?.status).toBe("cancelled");
    expect((await cell(rowId, "g1"))?.status).toBe("cancelled");
  });

  it("a carrier's step that deadlocks with another writer is run again", async () => {
    const t = await stamped(2, 1);
    const rowId = t.rowIds[0] as string;
    const e0 = (await cell(rowId, "g0"))?.execution_id as string;
    await claimNext(db(), { tableId: t.id, rowId, groupId: "g0" });
    const other = await otherWriter(rowId);
    try {
      // The step finishes g0 (locking it) and claims g1, which the other writer holds.
      const step = rowStep(db(), {
        tableId: t.id,
        rowId,
        finish: {
          groupId: "g0",
          ref: { executionId: e0, attempt: 1 },
          end: { kind: "complete", outcome: "ok", finish: { blockErrors: {}, outputs: {} } },
        },
        claim: { schemaVersion: 1, order: ["g0", "g1"], runId: "run_x" },
      });
      await other.closeCycle();
      const done = await step;
      expect(done.finished).toEqual({ ok: true });
      expect(done.claimed?.groupId).toBe("g1");
    } finally {
      await other.end();
    }
  });
});

describe("resume", () => {
  it("a resumed cell leaves its run: the run's window neither counts nor waits for it", async () => {
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: {
        blocks: [
          { id: "ask", type: "approval", prompt: "OK?", next: "out" },
          { id: "out", type: "transform", expression: "'ok'" },
        ],
      },
      outputs: { a: "out" },
      columns: [{ id: "a", name: "A", type: "text" }],
      rows: [{}, {}],
    });
    const [r1, r2] = rowIds as [string, string];
    const backend = new RecordingBackend();
    const run = await startRun(
      { db: db(), backend },
      {
        tableId,
        groupIds: ["g"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 1,
      },
    );
    const deps = engineDeps({ backend, chain: false });
    // r1 pauses; the window slides on to r2, which is in flight now.
    await runCarrier(deps, { tableId, rowId: r1, dispatchId: run.dispatchId }, taskContext());
    expect((await cell(r1, "g"))?.status).toBe("paused");
    expect(backend.carriersFor(r2)).toBe(1);
    const e1 = (await cell(r1, "g"))?.execution_id as string;
    const resumed = await apiClient(key).POST(
      "/api/tables/{id}/rows/{rowId}/cells/{groupId}/resume",
      {
        params: { path: { id: tableId, rowId: r1, groupId: "g" } },
        body: { executionId: e1, data: { ok: true } },
      },
    );
    expect(resumed.response.status).toBe(202);
    const [after] = await queryRows<{ dispatch_id: string | null; status: string }>(
      db(),
      sql`select dispatch_id, status::text as status from cells where row_id = ${r1}`,
    );
    expect(after).toEqual({ dispatch_id: null, status: "queued" });
  });
});

describe("orphan probe", () => {
  it("counts a running cell whose row lock nobody holds, and not one whose carrier holds it", async () => {
    const t = await stamped(1, 1);
    const rowId = t.rowIds[0] as string;
    const e = (await cell(rowId, "g0"))?.execution_id as string;
    const before = await runningWithoutLock(db());
    await claimNext(db(), { tableId: t.id, rowId, groupId: "g0" });
    expect(await runningWithoutLock(db())).toBe(before + 1);
    // The same key the carrier locks: holding it makes the cell a live one.
    const session = await acquireRowLock(resourcesOf(getDatabase()), t.id, rowId);
    expect(session).not.toBeNull();
    expect(await runningWithoutLock(db())).toBe(before);
    await session?.release();
    expect(await runningWithoutLock(db())).toBe(before + 1);
    await completeCell(db(), {
      tableId: t.id,
      rowId,
      groupId: "g0",
      executionId: e,
      attempt: 1,
      outcome: "ok",
      finish: { blockErrors: {} },
    });
    expect(await runningWithoutLock(db())).toBe(before);
  });
});

describe("one claim door", () => {
  it("a carrier claims every cell in a step: one step more on a table new to its process or after a schema edit, none when warm", async () => {
    const t = await stamped(1, 3);
    const [r1, r2, r3] = t.rowIds as [string, string, string];
    const steps = new Map<string, number>();
    const count: Pause = async (point, detail) => {
      const rowId = detail?.rowId;
      if (point !== "carrier:step" || !rowId) return;
      const n = (steps.get(rowId) ?? 0) + 1;
      steps.set(rowId, n);
      // A schema edit just before r3's first step: the order that step claims under is
      // of the version before.
      if (rowId === r3 && n === 1)
        await db().execute(
          sql`update tables set schema_version = schema_version + 1 where id = ${t.id}`,
        );
    };
    const deps = engineDeps({ backend: new RecordingBackend(), pause: count, chain: false });
    for (const rowId of [r1, r2, r3]) {
      const ctx = taskContext();
      await runCarrier(deps, { tableId: t.id, rowId }, ctx);
      expect(await cell(rowId, "g0")).toMatchObject({ status: "completed", attempt: 1 });
      const [c] = await queryRows<{ run_id: string }>(
        db(),
        sql`select run_id from cells where row_id = ${rowId}`,
      );
      expect(c?.run_id).toBe(ctx.runId);
    }
    // The read, the claim under the order it brought, the terminal write (whose step
    // reads the row done); warm, the read claims: the terminal write, and the read.
    expect([r1, r2, r3].map((r) => steps.get(r))).toEqual([3, 2, 3]);
  });
});

describe("release", () => {
  it("a carrier whose rounds run out with cells still queued hands the row to a new carrier", async () => {
    const t = await stamped(1, 1);
    const rowId = t.rowIds[0] as string;
    const backend = new RecordingBackend();
    // Each time the carrier is about to let go, the row gets a new queued cell.
    const restamp = everyPoint("carrier:release", () =>
      stampPage(db(), {
        tableId: t.id,
        dispatchId: null,
        groupIds: ["g0"],
        mode: "all",
        rowIds: [rowId],
        afterPosition: -1,
        maxRows: 1,
      }),
    );
    await runCarrier(
      engineDeps({ backend, pause: restamp, maxRounds: 2 }),
      { tableId: t.id, rowId },
      taskContext(),
    );
    expect((await cell(rowId, "g0"))?.status).toBe("queued");
    expect(backend.carriersFor(rowId)).toBe(1);
  });
});

describe("window slides of releases that wait together", () => {
  it("slide the run once for all of them and hand each release at most one row, in order", async () => {
    const t = await waitTable(key, { groups: 1, ms: 0, rows: 6 });
    const run = await startRun(
      { db: db(), backend: new RecordingBackend() },
      {
        tableId: t.id,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 3,
      },
    );
    // The three rows handed out are done: three slots are free.
    await db().execute(
      sql`update cells set status = 'completed', finished_at = now()
           where row_id in (${t.rowIds[0]}, ${t.rowIds[1]}, ${t.rowIds[2]})`,
    );
    const batcher = new AdvanceBatcher(db(), 1);
    const first = batcher.release([run.dispatchId]);
    // The end of the turn it was asked in sent it; its answer needs a round trip.
    await new Promise((turn) => setImmediate(turn));
    expect(batcher.stats.statements).toBe(1);
    const [a, b, c] = await Promise.all([
      first,
      batcher.release([run.dispatchId]),
      batcher.release([run.dispatchId]),
    ]);
    expect(a?.[0]?.rowIds).toEqual([t.rowIds[3]]);
    expect(b?.[0]?.rowIds).toEqual([t.rowIds[4]]);
    expect(c?.[0]?.rowIds).toEqual([t.rowIds[5]]);
    // The two that waited for it shared one slide of the run.
    expect(batcher.stats).toEqual({ statements: 2, releases: 3 });
  });

  it("a scan-line run refills its whole window once it is empty, and every row reaches a carrier", async () => {
    const t = await waitTable(key, { groups: 1, ms: 0, rows: 6 });
    const run = await startRun(
      { db: db(), backend: new RecordingBackend() },
      {
        tableId: t.id,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 3,
        scanline: true,
      },
    );
    const batcher = new AdvanceBatcher(db(), 1);
    // Two of the three done: a scan-line window waits for the third.
    await db().execute(
      sql`update cells set status = 'completed', finished_at = now()
           where row_id in (${t.rowIds[0]}, ${t.rowIds[1]})`,
    );
    expect((await batcher.release([run.dispatchId]))[0]?.rowIds).toEqual([]);
    await db().execute(
      sql`update cells set status = 'completed', finished_at = now() where row_id = ${t.rowIds[2]}`,
    );
    // The last one's release gets the whole next window, not one row of it.
    expect((await batcher.release([run.dispatchId]))[0]?.rowIds).toEqual(t.rowIds.slice(3, 6));
  });
});

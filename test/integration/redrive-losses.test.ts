/**
 * The re-drive gives up on a cell after MAX_LOSSES real losses of its execution: attempts
 * that died without ending (found running with their row lock free), not claims. An
 * approval's pause and resume, and a shutdown's hand-back, start a new attempt without
 * losing anything, and must not bring a cell nearer to being failed.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { log } from "@/config/log";
import { runCarrier } from "@/engine/carrier";
import { startRun } from "@/engine/dispatcher";
import { MAX_LOSSES, redriveOrphans } from "@/engine/redrive";
import { resumeCell } from "@/store/cells/resume";
import { rowSteps } from "@/store/cells/row-step";
import { claimNext } from "../helpers/cells";
import { useTestDatabase } from "../helpers/db";
import { cellCounts, engineDeps, redriveEngine } from "../helpers/engine";
import { RecordingBackend, taskContext } from "../helpers/engine-harness";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { waitTable, workflowTable } from "../helpers/tables";

let key: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

interface Cell {
  status: string;
  executionId: string;
  attempt: number;
  losses: number;
  error: string | null;
}

async function cellOf(tableId: string): Promise<Cell> {
  const [c] = await queryRows<Cell>(
    db(),
    sql`select status::text as status, execution_id as "executionId", attempt, losses, error
          from cells where table_id = ${tableId}`,
  );
  if (!c) throw new Error("no cell");
  return c;
}

/** One pass, from this process's pool, with its carriers recorded rather than run. */
const pass = () =>
  redriveOrphans(
    redriveEngine({ database: getDatabase(), backend: new RecordingBackend(), log: log() }),
  );

/** The row's cell running with nobody holding its row lock: its worker died mid-attempt. */
async function loseWorker(tableId: string, rowId: string, groupId: string): Promise<number> {
  const claimed = await claimNext(db(), { tableId, rowId, groupId });
  if (!claimed) throw new Error("claimed nothing");
  return claimed.attempt;
}

describe("the re-drive counts losses, not claims", () => {
  it(`a cell lost ${MAX_LOSSES} times ends as an error, with the message it always had`, async () => {
    const t = await waitTable(key, { groups: 1, ms: 0, rows: 1 });
    const rowId = t.rowIds[0] as string;
    await startRun(
      { db: db(), backend: new RecordingBackend() },
      {
        tableId: t.id,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 1,
      },
    );
    for (let loss = 1; loss < MAX_LOSSES; loss++) {
      expect(await loseWorker(t.id, rowId, "g0")).toBe(loss);
      expect(await pass()).toMatchObject({ requeued: 1, failed: 0 });
      expect(await cellOf(t.id)).toMatchObject({ status: "queued", losses: loss });
    }
    await loseWorker(t.id, rowId, "g0");
    expect(await pass()).toMatchObject({ requeued: 0, failed: 1 });
    expect(await cellOf(t.id)).toMatchObject({
      status: "error",
      error: `The worker running this cell was lost ${MAX_LOSSES} times; run it again`,
    });
  });

  it("a workflow with two approvals, resumed twice, then lost once, is re-driven, not failed", async () => {
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: {
        blocks: [
          { id: "first", type: "approval", prompt: "First?", next: "second" },
          { id: "second", type: "approval", prompt: "Second?", next: "out" },
          {
            id: "out",
            type: "transform",
            expression: "blocks.first.answer & blocks.second.answer",
          },
        ],
      },
      outputs: { a: "out" },
      columns: [{ id: "a", name: "A", type: "text" }],
    });
    const rowId = rowIds[0] as string;
    await startRun(
      { db: db(), backend: new RecordingBackend() },
      {
        tableId,
        groupIds: ["g"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 1,
      },
    );
    const deps = engineDeps({ backend: new RecordingBackend(), chain: false });
    // Each approval: the carrier's attempt pauses, and the answer resumes it.
    for (const answer of ["y", "es"]) {
      await runCarrier(deps, { tableId, rowId }, taskContext());
      const paused = await cellOf(tableId);
      expect(paused.status).toBe("paused");
      const resumed = await resumeCell(db(), {
        tableId,
        rowId,
        groupId: "g",
        executionId: paused.executionId,
        data: { approval: { answer } },
      });
      expect(resumed).toEqual({ ok: true });
    }
    // Two claims so far; the third attempt's worker dies.
    expect(await loseWorker(tableId, rowId, "g")).toBe(3);
    expect(await pass()).toMatchObject({ requeued: 1, failed: 0 });
    expect(await cellOf(tableId)).toMatchObject({ status: "queued", losses: 1 });
    // And the next carrier finishes it after both approvals.
    await runCarrier(deps, { tableId, rowId }, taskContext());
    expect(await cellOf(tableId)).toMatchObject({ status: "completed", attempt: 4 });
    const [row] = await queryRows<{ a: string }>(
      db(),
      sql`select data->>'a' as a from rows where id = ${rowId}`,
    );
    expect(row?.a).toBe("yes");
  });

  it("a cell handed back by two graceful restarts, then lost once, is re-driven, not failed", async () => {
    const t = await waitTable(key, { groups: 1, ms: 60_000, rows: 1 });
    const rowId = t.rowIds[0] as string;
    await startRun(
      { db: db(), backend: new RecordingBackend() },
      {
        tableId: t.id,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 1,
      },
    );
    const deps = engineDeps({ backend: new RecordingBackend(), chain: false });
    for (let restart = 1; restart <= 2; restart++) {
      // The worker shuts down while the attempt waits: its carrier hands the cell back.
      const shutdown = new AbortController();
      const carrying = runCarrier(deps, { tableId: t.id, rowId }, taskContext(shutdown.signal));
      expect(await waitFor(async () => (await cellCounts(t.id)).running === 1, 30_000, 20)).toBe(
        true,
      );
      shutdown.abort(new Error("worker stopping"));
      await carrying;
      expect(await cellOf(t.id)).toMatchObject({ status: "queued", attempt: restart, losses: 0 });
    }
    expect(await loseWorker(t.id, rowId, "g0")).toBe(3);
    expect(await pass()).toMatchObject({ requeued: 1, failed: 0 });
    expect(await cellOf(t.id)).toMatchObject({ status: "queued", losses: 1 });
  });

  it("a terminal write lost with its asynchronous commit (a database crash) leaves the cell running: the re-drive runs it again, and it ends once", async () => {
    const t = await waitTable(key, { groups: 1, ms: 0, rows: 1 });
    const rowId = t.rowIds[0] as string;
    await startRun(
      { db: db(), backend: new RecordingBackend() },
      { tableId: t.id, groupIds: ["g0"], mode: "all", rowIds: null, limit: null, window: 1 },
    );
    const attempt = await loseWorker(t.id, rowId, "g0");
    const { executionId } = await cellOf(t.id);
    // The step with the attempt's terminal write commits asynchronously (it settles no
    // charge); a crash before the WAL flush loses the whole transaction, as a rollback does.
    const lost = new Error("the database crashed before the flush");
    await expect(
      db().transaction(async (tx) => {
        const [step] = await rowSteps(tx, [
          {
            tableId: t.id,
            rowId,
            finish: {
              groupId: "g0",
              ref: { executionId, attempt },
              end: { kind: "complete", outcome: "ok", finish: { blockErrors: {} } },
            },
          },
        ]);
        expect(step?.finished).toEqual({ ok: true });
        throw lost;
      }),
    ).rejects.toBe(lost);
    // Back to the state a crash mid-attempt leaves: running, its row lock gone.
    expect(await cellOf(t.id)).toMatchObject({ status: "running", attempt, losses: 0 });
    expect(await pass()).toMatchObject({ requeued: 1, failed: 0 });
    expect(await cellOf(t.id)).toMatchObject({ status: "queued", losses: 1 });
    await runCarrier(
      engineDeps({ backend: new RecordingBackend(), chain: false }),
      { tableId: t.id, rowId },
      taskContext(),
    );
    expect(await cellOf(t.id)).toMatchObject({ status: "completed", attempt: attempt + 1 });
    const [ends] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from events where table_id = ${t.id} and kind = 'cell'
            and data->>'status' in ('completed', 'error', 'cancelled')`,
    );
    expect(ends?.n).toBe(1);
  });

  it("a new run of the cell starts its losses from 0", async () => {
    const t = await waitTable(key, { groups: 1, ms: 0, rows: 1 });
    const rowId = t.rowIds[0] as string;
    const run = () =>
      startRun(
        { db: db(), backend: new RecordingBackend() },
        {
          tableId: t.id,
          groupIds: ["g0"],
          mode: "all",
          rowIds: null,
          limit: null,
          window: 1,
        },
      );
    await run();
    for (let loss = 1; loss < MAX_LOSSES; loss++) {
      await loseWorker(t.id, rowId, "g0");
      await pass();
    }
    expect(await cellOf(t.id)).toMatchObject({ status: "queued", losses: MAX_LOSSES - 1 });
    await run();
    expect(await cellOf(t.id)).toMatchObject({ status: "queued", attempt: 0, losses: 0 });
    await loseWorker(t.id, rowId, "g0");
    expect(await pass()).toMatchObject({ requeued: 1, failed: 0 });
  });
});

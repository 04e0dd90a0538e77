/**
 * Attempt history at the store level, through the real writers (stamp, claim, finish,
 * requeue, Stop, edit-clear) with no worker: the attempt a cell moves on from is kept with
 * its status, error, times, outputs and block errors; a cell's first run records nothing
 * (the history costs the fresh-cell path nothing); a cell keeps its last 20; `cell`
 * events carry the attempt number; the route lists the current attempt first and answers
 * 404 for what the key cannot see. And `resume: true` stamping: every page of a resume
 * run (the background job's too) copies the checkpoints a cell resumes from under its
 * new execution, and the old execution is fenced out of it.
 */

import { type Db, queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { CellAttemptsResponse } from "@/contracts/cells";
import { TableSchema } from "@/contracts/table";
import { stampRun } from "@/engine/dispatcher";
import { ATTEMPTS_KEPT } from "@/store/cells/attempts";
import { cancelCells } from "@/store/cells/cancel";
import { clearGroupCells } from "@/store/cells/clear";
import { failCell } from "@/store/cells/finish";
import { requeueCell } from "@/store/cells/requeue";
import { stampPage } from "@/store/cells/stamp";
import { stampNextPage } from "@/store/dispatches/stamp-next";
import { readExecutionRecords } from "@/store/execution-steps/read";
import { writeCheckpoint } from "@/store/executions/checkpoint";
import { insertRows } from "@/store/rows/insert";
import { createTable } from "@/store/tables/create";
import { apiClient, dataOf } from "../helpers/api";
import { claimNext, completeCell } from "../helpers/cells";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { enrichmentTableBody } from "../helpers/store-tables";

let key: string;
let tableId: string;

const readCheckpoints = async (db: Db, executionId: string) =>
  (await readExecutionRecords(db, executionId)).checkpoints;
const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
  const ws = await newWorkspace();
  key = ws.key;
  const { columns, groups } = enrichmentTableBody("attempts", {
    enrichmentId: "email_domain",
    inputs: { email: "email" },
    outputs: { out: "domain" },
  });
  const schema = TableSchema.parse({ columns, groups });
  tableId = (await createTable(db(), ws.id, { name: "attempts", schema })).id;
});

async function newRow(): Promise<string> {
  const rows = await insertRows(db(), tableId, [{ email: "a@b.example" }]);
  return rows?.[0]?.id as string;
}

async function stamp(rowId: string, mode: "all" | "incomplete" = "all"): Promise<string> {
  await stampPage(db(), {
    tableId,
    dispatchId: null,
    groupIds: ["g"],
    mode,
    rowIds: [rowId],
    afterPosition: -1,
    maxRows: 1,
  });
  const [c] = await queryRows<{ execution_id: string }>(
    db(),
    sql`select execution_id from cells where row_id = ${rowId} and group_id = 'g'`,
  );
  return c?.execution_id as string;
}

/** Stamp, claim and end one attempt the way a carrier does; returns its execution id. */
async function runOnce(
  rowId: string,
  end: { ok: true; out: string } | { ok: false; message: string },
): Promise<string> {
  const executionId = await stamp(rowId);
  const claimed = await claimNext(db(), { tableId, rowId, groupId: "g" });
  if (!claimed) throw new Error("claimed nothing");
  const ref = { executionId, attempt: claimed.attempt };
  const done = end.ok
    ? await completeCell(db(), {
        tableId,
        rowId,
        groupId: "g",
        ...ref,
        outcome: "ok",
        finish: { blockErrors: {}, outputs: { out: end.out } },
      })
    : await failCell(db(), {
        rowId,
        groupId: "g",
        ...ref,
        message: end.message,
        finish: { blockErrors: { x: end.message } },
      });
  if (!done.ok) throw new Error(`terminal write lost: ${done.reason}`);
  return executionId;
}

const records = async (rowId: string) =>
  queryRows<{ execution_id: string; attempt: number; status: string; error: string | null }>(
    db(),
    sql`select execution_id, attempt, status, error from cell_attempts
         where row_id = ${rowId} and group_id = 'g' order by id`,
  );

async function attempts(rowId: string, groupId = "g") {
  const res = await apiClient(key).GET("/api/tables/{id}/rows/{rowId}/cells/{groupId}/attempts", {
    params: { path: { id: tableId, rowId, groupId } },
  });
  expect(res.response.status, JSON.stringify(res.error ?? res.data)).toBe(200);
  return CellAttemptsResponse.parse(dataOf(res)).attempts;
}

describe("attempt history", () => {
  it("a cell's first attempt writes no history record: the cell row is its current attempt", async () => {
    const rowId = await newRow();
    const executionId = await runOnce(rowId, { ok: true, out: "b.example" });
    expect(await records(rowId)).toEqual([]);
    const [current, ...rest] = await attempts(rowId);
    expect(rest).toEqual([]);
    expect(current).toMatchObject({
      executionId,
      attempt: 1,
      status: "completed",
      outcome: "ok",
      error: null,
      outputs: { out: "b.example" },
      resumedFrom: null,
    });
    expect(current?.startedAt).toMatch(/Z$/);
    expect(current?.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("a re-run keeps the attempt it replaced, newest first, with its status, error, outputs and times", async () => {
    const rowId = await newRow();
    const first = await runOnce(rowId, { ok: true, out: "one" });
    const second = await runOnce(rowId, { ok: false, message: "provider said no" });
    const third = await stamp(rowId);
    const list = await attempts(rowId);
    expect(list.map((a) => [a.executionId, a.status])).toEqual([
      [third, "queued"],
      [second, "error"],
      [first, "completed"],
    ]);
    expect(list[1]).toMatchObject({
      attempt: 1,
      error: "provider said no",
      blockErrors: { x: "provider said no" },
      outputs: null,
    });
    expect(list[2]).toMatchObject({ attempt: 1, outcome: "ok", outputs: { out: "one" } });
    for (const ended of list.slice(1)) {
      expect(ended.startedAt).not.toBeNull();
      expect(ended.endedAt).not.toBeNull();
      expect(ended.durationMs).toBeGreaterThanOrEqual(0);
    }
  });

  it("an attempt a new run takes over while it runs is kept as cancelled", async () => {
    const rowId = await newRow();
    const executionId = await stamp(rowId);
    expect(await claimNext(db(), { tableId, rowId, groupId: "g" })).toMatchObject({ executionId });
    await stamp(rowId);
    expect(await records(rowId)).toEqual([
      {
        execution_id: executionId,
        attempt: 1,
        status: "cancelled",
        error: "Replaced by a new run before it finished",
      },
    ]);
  });

  it("a queued cell replaced before any claim leaves no record (nothing ran)", async () => {
    const rowId = await newRow();
    await stamp(rowId);
    await stamp(rowId);
    expect(await records(rowId)).toEqual([]);
  });

  it("an attempt a re-drive hands back is kept under its own attempt number", async () => {
    const rowId = await newRow();
    const executionId = await stamp(rowId);
    expect(await claimNext(db(), { tableId, rowId, groupId: "g" })).toMatchObject({ attempt: 1 });
    const back = await requeueCell(db(), { rowId, groupId: "g", executionId, attempt: 1 }, "lost");
    expect(back.ok).toBe(true);
    const again = await claimNext(db(), { tableId, rowId, groupId: "g" });
    expect(again).toMatchObject({ executionId, attempt: 2 });
    const list = await attempts(rowId);
    expect(list.map((a) => [a.executionId, a.attempt, a.status])).toEqual([
      [executionId, 2, "running"],
      [executionId, 1, "error"],
    ]);
    expect(list[1]?.error).toMatch(/^Interrupted/);
  });

  it("a Stop keeps the cell's attempt as the current one; the run after it records it as cancelled", async () => {
    const rowId = await newRow();
    const executionId = await stamp(rowId);
    await claimNext(db(), { tableId, rowId, groupId: "g" });
    await cancelCells(db(), { tableId, rowIds: [rowId] });
    expect(await records(rowId)).toEqual([]);
    await stamp(rowId, "incomplete");
    expect((await records(rowId)).map((r) => [r.execution_id, r.status])).toEqual([
      [executionId, "cancelled"],
    ]);
  });

  it("an edit that clears a finished cell keeps its attempt, outputs as they were before the clearing", async () => {
    const rowId = await newRow();
    const executionId = await runOnce(rowId, { ok: true, out: "kept" });
    await clearGroupCells(db(), { tableId, rowId, groupIds: ["g"], clearColumns: ["out"] });
    const list = await attempts(rowId);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ executionId, status: "completed", outputs: { out: "kept" } });
  });

  it(`a cell keeps its last ${ATTEMPTS_KEPT} attempts and lists at most ${ATTEMPTS_KEPT}`, async () => {
    const rowId = await newRow();
    const ids: string[] = [];
    for (let i = 0; i < ATTEMPTS_KEPT + 5; i++)
      ids.push(await runOnce(rowId, { ok: false, message: `try ${i}` }));
    const kept = await records(rowId);
    expect(kept).toHaveLength(ATTEMPTS_KEPT);
    // The oldest went first: the records are the attempts before the current one.
    expect(kept.map((r) => r.execution_id)).toEqual(ids.slice(4, -1));
    const list = await attempts(rowId);
    expect(list.map((a) => a.executionId)).toEqual(ids.slice(-ATTEMPTS_KEPT).reverse());
  });

  it("cell events carry the attempt number of the write they describe", async () => {
    const rowId = await newRow();
    const executionId = await stamp(rowId);
    expect(await claimNext(db(), { tableId, rowId, groupId: "g" })).toMatchObject({ attempt: 1 });
    await requeueCell(db(), { rowId, groupId: "g", executionId, attempt: 1 }, "lost");
    await claimNext(db(), { tableId, rowId, groupId: "g" });
    await completeCell(db(), {
      tableId,
      rowId,
      groupId: "g",
      executionId,
      attempt: 2,
      outcome: "ok",
      finish: { blockErrors: {} },
    });
    const events = await queryRows<{ status: string; attempt: number }>(
      db(),
      sql`select data->>'status' as status, (data->>'attempt')::int as attempt from events
           where table_id = ${tableId} and kind = 'cell' and data->>'rowId' = ${rowId} order by id`,
    );
    expect(events).toEqual([
      { status: "queued", attempt: 0 },
      { status: "running", attempt: 1 },
      { status: "queued", attempt: 1 },
      { status: "running", attempt: 2 },
      { status: "completed", attempt: 2 },
    ]);
  });

  it("lists nothing for a cell never run, and answers 404 for an unknown table, row or group", async () => {
    const rowId = await newRow();
    expect(await attempts(rowId)).toEqual([]);
    const other = await newWorkspace("other");
    const get = (id: string, row: string, groupId: string, as = key) =>
      apiClient(as).GET("/api/tables/{id}/rows/{rowId}/cells/{groupId}/attempts", {
        params: { path: { id, rowId: row, groupId } },
      });
    expect((await get(tableId, rowId, "g", other.key)).response.status).toBe(404);
    expect((await get("tbl_missing", rowId, "g")).response.status).toBe(404);
    expect((await get(tableId, "row_missing", "g")).response.status).toBe(404);
    expect((await get(tableId, rowId, "nope")).response.status).toBe(404);
  });
});

describe("resume stamping", () => {
  /** A cell whose attempt recorded `blocks` as finished, then failed. */
  async function failedWith(blocks: string[]): Promise<{ rowId: string; executionId: string }> {
    const rowId = await newRow();
    const executionId = await stamp(rowId);
    const claimed = await claimNext(db(), { tableId, rowId, groupId: "g" });
    if (!claimed) throw new Error("claimed nothing");
    const ref = { executionId, attempt: claimed.attempt, tableId, rowId, groupId: "g" };
    for (const b of blocks)
      expect(await writeCheckpoint(db(), ref, b, { output: { from: b }, taken: [] })).toBe(true);
    await failCell(db(), { ...ref, message: "block two failed", finish: { blockErrors: {} } });
    return { rowId, executionId };
  }

  const cellOf = async (rowId: string) =>
    (
      await queryRows<{ execution_id: string; resumed_from: string | null }>(
        db(),
        sql`select execution_id, resumed_from from cells where row_id = ${rowId} and group_id = 'g'`,
      )
    )[0];

  it("every page of a resume run, the background ones too, starts the cells from copies of their checkpoints", async () => {
    await db().execute(sql`delete from cells where table_id = ${tableId}`);
    const failed = [await failedWith(["one"]), await failedWith(["one"]), await failedWith([])];
    const run = await stampRun(
      { db: db() },
      {
        tableId,
        groupIds: ["g"],
        mode: "failed",
        rowIds: null,
        limit: null,
        window: 5,
        syncRows: 1,
        pageRows: 1,
        resume: true,
      },
    );
    // One row in the request; the rest is the background job's, which reads the dispatch.
    expect(run).toMatchObject({ stamping: true, stamped: 1 });
    let pages = 0;
    while ((await stampNextPage(db(), run.dispatchId, 1)).more) pages++;
    expect(pages).toBeGreaterThan(0);
    for (const [i, old] of failed.entries()) {
      const now = await cellOf(old.rowId);
      expect(now?.execution_id).not.toBe(old.executionId);
      // The third cell failed before any block finished: nothing to resume from.
      expect(now?.resumed_from).toBe(i < 2 ? old.executionId : null);
      expect(await readCheckpoints(db(), now?.execution_id ?? "")).toEqual(
        i < 2 ? { one: { output: { from: "one" }, taken: [] } } : {},
      );
    }
  });

  it("the old execution cannot write into the resumed one: its checkpoint write is fenced out", async () => {
    const old = await failedWith(["one"]);
    await stampPage(db(), {
      tableId,
      dispatchId: null,
      groupIds: ["g"],
      mode: "failed",
      rowIds: [old.rowId],
      afterPosition: -1,
      maxRows: 1,
      resume: true,
    });
    const ref = {
      executionId: old.executionId,
      attempt: 1,
      tableId,
      rowId: old.rowId,
      groupId: "g",
    };
    expect(await writeCheckpoint(db(), ref, "late", { output: 1, taken: [] })).toBe(false);
    const now = await cellOf(old.rowId);
    expect(Object.keys(await readCheckpoints(db(), now?.execution_id ?? ""))).toEqual(["one"]);
  });

  it("a run without resume starts a failed cell from scratch", async () => {
    const old = await failedWith(["one"]);
    await stamp(old.rowId, "incomplete");
    const now = await cellOf(old.rowId);
    expect(now?.resumed_from).toBeNull();
    expect(await readCheckpoints(db(), now?.execution_id ?? "")).toEqual({});
  });
});

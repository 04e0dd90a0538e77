/**
 * A row edit's merge and its re-arm commit together or not at all, retried whole on a
 * deadlock; a row delete is retried the same way; an edit and a Stop made at once end as
 * one of their two serial orders. Interleavings are forced with locks another session
 * holds (the flow waits on them; the test waits for that wait), never with sleeps.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import type { CarrierPayload } from "@/backends/port";
import { log } from "@/config/log";
import { runCarrier } from "@/engine/carrier";
import { startRun } from "@/engine/dispatcher";
import { stopRuns } from "@/engine/stop";
import type { ServiceContext } from "@/services/context";
import { deleteRow, insertRows, patchRow } from "@/services/rows";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { engineDeps } from "../helpers/engine";
import { RecordingBackend, taskContext } from "../helpers/engine-harness";
import { newWorkspace, upperDefinition } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";

let url: string;
let key: string;
let workspaceId: string;
let upper: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  url = (await useTestDatabase()).url;
  ({ id: workspaceId, key } = await newWorkspace());
  upper = dataOf(
    await apiClient(key).POST("/api/workflows", {
      body: { name: "upper", definition: upperDefinition },
    }),
  ).id;
});

const ctxOf = (backend: RecordingBackend): ServiceContext => ({
  db: db(),
  workspaceId,
  log: log(),
  backend,
});

function group(id: string, input: string, output: string, autoRun: boolean) {
  return {
    id,
    name: id,
    kind: "workflow" as const,
    workflowId: upper,
    inputs: { v: input },
    outputs: [{ columnId: output, from: "out" }],
    dependsOn: autoRun ? [input] : [],
    autoRun,
  };
}

/** Runs every carrier job enqueued so far, and those they enqueue, to the end. */
async function carryAll(backend: RecordingBackend): Promise<void> {
  const deps = engineDeps({ backend });
  for (let jobs = backend.take(); jobs.length > 0; jobs = backend.take())
    for (const job of jobs)
      if (job.task === "row-carrier")
        await runCarrier(deps, job.payload as CarrierPayload, taskContext());
}

/**
 * A row whose auto-run chain has run: `ga` upper-cases `src` into `a`, `gb` then `a` into
 * `b`. `gz` auto-runs on `z` (empty so far), `gm` is a manual group on `src`.
 */
async function finishedRow(): Promise<{ tableId: string; rowId: string }> {
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "edits",
      columns: ["src", "a", "b", "z", "zz", "m"].map((id) => ({
        id,
        name: id,
        type: "text" as const,
      })),
      groups: [
        group("ga", "src", "a", true),
        group("gb", "a", "b", true),
        group("gz", "z", "zz", true),
        group("gm", "src", "m", false),
      ],
    },
  });
  const tableId = dataOf(t).id;
  const backend = new RecordingBackend();
  const ins = await insertRows(ctxOf(backend), tableId, { rows: [{ data: { src: "x" } }] });
  if (!ins.ok) throw new Error("insert failed");
  const rowId = ins.value.rows[0]?.id as string;
  await carryAll(backend);
  expect((await rowState(rowId)).data).toEqual({ src: "x", a: "X", b: "X" });
  return { tableId, rowId };
}

async function rowState(rowId: string) {
  const [row] = await queryRows<{ data: Record<string, unknown> }>(
    db(),
    sql`select data from rows where id = ${rowId}`,
  );
  const cells = await queryRows<{ group_id: string; status: string; execution_id: string }>(
    db(),
    sql`select group_id, status::text as status, execution_id from cells where row_id = ${rowId}
         order by group_id`,
  );
  return {
    data: row?.data,
    cells: Object.fromEntries(cells.map((c) => [c.group_id, `${c.status} ${c.execution_id}`])),
  };
}

async function runsOf(tableId: string): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db(),
    sql`select count(*)::int as n from dispatches where table_id = ${tableId}`,
  );
  return r?.n ?? 0;
}

/** The sessions of this database waiting for a lock (of `kind`: a pg_locks locktype). */
async function waiters(kind?: "advisory" | "tuple" | "transactionid"): Promise<number[]> {
  const rows = await queryRows<{ pid: number }>(
    db(),
    sql`select pid from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'
           and (${kind ?? null}::text is null or wait_event = ${kind ?? null})`,
  );
  return rows.map((r) => r.pid);
}

async function someoneWaits(kind?: "advisory" | "tuple" | "transactionid"): Promise<number> {
  let pid = 0;
  const ok = await waitFor(async () => {
    pid = (await waiters(kind))[0] ?? 0;
    return pid !== 0;
  }, 10_000);
  if (!ok) throw new Error(`nobody waited for a ${kind ?? "lock"}`);
  return pid;
}

/**
 * Another session with an open transaction, standing for a carrier's or a run's writes.
 * It never detects a deadlock itself (its timeout is long): the flow's session does, and
 * the flow's statement is the one rolled back.
 */
async function otherSession() {
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  await other.query("begin");
  await other.query("set local deadlock_timeout = '30s'");
  return {
    query: (text: string, values: unknown[] = []) => other.query(text, values),
    async end(commit: boolean) {
      await other.query(commit ? "commit" : "rollback");
      await other.end();
    },
  };
}

describe("an edit's merge and re-arm are one transaction", () => {
  it("an edit whose re-arm fails leaves the row as it was: old inputs with their old outputs", async () => {
    const { tableId, rowId } = await finishedRow();
    const before = await rowState(rowId);
    const other = await otherSession();
    await other.query("select 1 from cells where row_id = $1 and group_id = 'gb' for update", [
      rowId,
    ]);
    const backend = new RecordingBackend();
    const edit = patchRow(ctxOf(backend), tableId, rowId, { data: { src: "y" } });
    // Handled from the start: the edit may reject before pg_cancel_backend's own answer
    // comes back, and a rejection with no handler yet fails the run as unhandled.
    const refused = expect(edit).rejects.toThrow();
    // The re-arm waits for gb's cell: its statement is cancelled there.
    const pid = await someoneWaits();
    await db().execute(sql`select pg_cancel_backend(${pid})`);
    await refused;
    await other.end(false);
    expect(await rowState(rowId)).toEqual(before);
    expect(await runsOf(tableId)).toBe(1);
    expect(backend.jobs).toEqual([]);
  });

  it("an edit that deadlocks with a carrier's write is run again whole and re-arms the dependents", async () => {
    const { tableId, rowId } = await finishedRow();
    const before = await rowState(rowId);
    const other = await otherSession();
    await other.query("select 1 from cells where row_id = $1 and group_id = 'gb' for update", [
      rowId,
    ]);
    const backend = new RecordingBackend();
    const edit = patchRow(ctxOf(backend), tableId, rowId, { data: { src: "y" } });
    // The edit locked ga's cell and waits for gb's: a write of ga closes the cycle.
    await someoneWaits();
    await other.query("update cells set updated_at = now() where row_id = $1 and group_id = 'ga'", [
      rowId,
    ]);
    await other.end(true);
    const edited = await edit;
    expect(edited.ok && edited.value.data).toEqual({ src: "y" });
    const after = await rowState(rowId);
    // ga stamped afresh by the edit's run (gb waits for its output); nothing else left.
    expect(Object.keys(after.cells)).toEqual(["ga"]);
    expect(after.cells.ga).toMatch(/^queued /);
    expect(after.cells.ga).not.toBe(before.cells.ga);
    expect(await runsOf(tableId)).toBe(2);
    // Carriers go out after the commit, and the dependents run again on the new value.
    expect(backend.carriersFor(rowId)).toBe(1);
    await carryAll(backend);
    expect((await rowState(rowId)).data).toEqual({ src: "y", a: "Y", b: "Y" });
  });
});

describe("a row delete", () => {
  it("a delete that deadlocks with a carrier's write is run again, not answered with an error", async () => {
    const { tableId, rowId } = await finishedRow();
    const other = await otherSession();
    await other.query("select 1 from cells where row_id = $1 and group_id = 'gb' for update", [
      rowId,
    ]);
    const del = deleteRow(ctxOf(new RecordingBackend()), tableId, rowId);
    // The delete holds the row and waits for gb's cell: a write of the row closes the cycle.
    await someoneWaits();
    await other.query("update rows set updated_at = now() where id = $1", [rowId]);
    await other.end(true);
    expect(await del).toEqual({ ok: true, value: null });
    expect(await rowState(rowId)).toEqual({ data: undefined, cells: {} });
  });
});

/** A row's values and its cells' statuses, once every carrier job so far has run. */
async function settled(rowId: string, backend: RecordingBackend) {
  await carryAll(backend);
  const { data, cells } = await rowState(rowId);
  return {
    data,
    cells: Object.fromEntries(Object.entries(cells).map(([g, c]) => [g, c.split(" ")[0]])),
  };
}

/** Until `flow` has settled or also waits for a lock (then `n` sessions wait). */
async function settledOrWaiting(flow: Promise<unknown>, n: number): Promise<void> {
  let done = false;
  void flow.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  expect(await waitFor(async () => done || (await waiters()).length >= n, 10_000)).toBe(true);
}

describe("an edit and a Stop at once end as one of their two serial orders", () => {
  it("a Stop made while an edit is stamping waits for it, then stops what it stamped", async () => {
    const { tableId, rowId } = await finishedRow();
    await db().execute(sql`update rows set data = data || '{"z": "q"}' where id = ${rowId}`);
    // A run request stamping gz on the row at the same time: the edit's stamp of gz waits
    // for it, with ga already stamped and its run made, not yet committed.
    const other = await otherSession();
    await other.query(
      `insert into cells (table_id, row_id, group_id, status, execution_id, row_position)
       select table_id, id, 'gz', 'queued', 'ex2_other', position from rows where id = $1`,
      [rowId],
    );
    const backend = new RecordingBackend();
    const edit = patchRow(ctxOf(backend), tableId, rowId, { data: { src: "y" } });
    await someoneWaits("transactionid");
    const stop = stopRuns({ db: db(), backend: new RecordingBackend() }, { tableId });
    await settledOrWaiting(stop, 2);
    await other.end(false);
    expect((await edit).ok).toBe(true);
    await stop;
    const editThenStop = {
      data: { src: "y", z: "q" },
      cells: { ga: "cancelled", gz: "cancelled" },
    };
    const stopThenEdit = {
      data: { src: "y", a: "Y", b: "Y", z: "q", zz: "Q" },
      cells: { ga: "completed", gb: "completed", gz: "completed" },
    };
    const after = await settled(rowId, backend);
    expect([editThenStop, stopThenEdit]).toContainEqual(after);
    // The Stop waited for the edit (the table's stop lock) and stopped both cells it stamped.
    expect(after).toEqual(editThenStop);
  });

  it("an edit made while a Stop is in progress waits for it and is a new request after it", async () => {
    const { tableId, rowId } = await finishedRow();
    // A manual run of gm, in flight: the Stop locks it first, and waits for it here.
    const run = await startRun(
      { db: db(), backend: new RecordingBackend() },
      {
        tableId,
        groupIds: ["gm"],
        mode: "all",
        rowIds: [rowId],
        limit: null,
        window: 10,
      },
    );
    const other = await otherSession();
    await other.query("select 1 from dispatches where id = $1 for update", [run.dispatchId]);
    const stop = stopRuns({ db: db(), backend: new RecordingBackend() }, { tableId });
    await someoneWaits();
    const backend = new RecordingBackend();
    const edit = patchRow(ctxOf(backend), tableId, rowId, { data: { src: "y" } });
    await settledOrWaiting(edit, 2);
    await other.end(false);
    await stop;
    expect((await edit).ok).toBe(true);
    const editThenStop = { data: { src: "y" }, cells: { ga: "cancelled", gm: "cancelled" } };
    const stopThenEdit = {
      data: { src: "y", a: "Y", b: "Y" },
      cells: { ga: "completed", gb: "completed", gm: "cancelled" },
    };
    const after = await settled(rowId, backend);
    expect([editThenStop, stopThenEdit]).toContainEqual(after);
    // The edit waited for the Stop: its cells are newer than the Stop, which then holds
    // nothing on the row (gb auto-runs after ga).
    expect(after).toEqual(stopThenEdit);
  });
});

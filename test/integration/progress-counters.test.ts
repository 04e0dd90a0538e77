/**
 * The progress counters (statement triggers append deltas, a fold moves them into the
 * base, a read adds both) equal a full count of the cells and rows after every kind of
 * write that moves cells: a bulk stamp, an edit's clear, a row delete, a group's removal,
 * a table's delete; folds at the same moment do not count a delta twice; the migration's
 * backfill counts cells that were there before the counters. Interleavings are forced
 * with a lock another session holds, never with sleeps.
 */

import fs from "node:fs";
import path from "node:path";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { MIGRATIONS_DIR } from "@db/migrate";
import { sql } from "drizzle-orm";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import type { CarrierPayload } from "@/backends/port";
import { log } from "@/config/log";
import { ProgressEventData } from "@/contracts/events";
import { TableProgress } from "@/contracts/progress";
import { runCarrier } from "@/engine/carrier";
import type { ServiceContext } from "@/services/context";
import { deleteRow, insertRows, patchRow } from "@/services/rows";
import { createRun } from "@/services/runs";
import { deleteTable, patchTable } from "@/services/tables";
import { foldCounts } from "@/store/progress/fold";
import { readProgress } from "@/store/progress/read";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { engineDeps } from "../helpers/engine";
import { RecordingBackend, taskContext } from "../helpers/engine-harness";
import { newWorkspace, upperDefinition } from "../helpers/fixtures";
import {
  counterFindings,
  deltasOf,
  foldNow,
  fullProgress,
  fullRunGroupCounts,
  runGroupCounts,
} from "../helpers/progress";

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

const backend = new RecordingBackend();
const ctx = (): ServiceContext => ({ db: db(), workspaceId, log: log(), backend });

function group(id: string, input: string, output: string, autoRun: boolean) {
  return {
    id,
    name: id,
    kind: "workflow" as const,
    workflowId: upper,
    version: "live" as const,
    inputs: { v: input },
    outputs: [{ columnId: output, from: "out" }],
    dependsOn: autoRun ? [input] : [],
    autoRun,
  };
}

/** `ga` fills `a` from `src`, `gb` then `b` from `a` (both auto-run); `gm` is manual. */
const groups = () => [
  group("ga", "src", "a", true),
  group("gb", "a", "b", true),
  group("gm", "src", "m", false),
];

/** Runs every carrier job enqueued so far, and those they enqueue, to the end. */
async function carryAll(): Promise<void> {
  const deps = engineDeps({ backend });
  for (let jobs = backend.take(); jobs.length > 0; jobs = backend.take())
    for (const job of jobs)
      if (job.task === "row-carrier")
        await runCarrier(deps, job.payload as CarrierPayload, taskContext());
}

/** A table of `rows` rows whose auto-run chain (`ga`, then `gb`) ran; `gm` never ran. */
async function ranTable(rows: number, values = (i: number) => `v${i}`): Promise<string> {
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "counted",
      columns: ["src", "a", "b", "m"].map((id) => ({ id, name: id, type: "text" as const })),
      groups: groups(),
    },
  });
  const tableId = dataOf(t).id;
  const ins = await insertRows(ctx(), tableId, {
    rows: Array.from({ length: rows }, (_, i) => ({ data: { src: values(i) } })),
  });
  if (!ins.ok) throw new Error("insert failed");
  await carryAll();
  return tableId;
}

async function progress(tableId: string): Promise<TableProgress> {
  const res = await apiClient(key).GET("/api/tables/{id}/progress", {
    params: { path: { id: tableId } },
  });
  expect(res.response.status).toBe(200);
  return TableProgress.parse(res.data);
}

async function rowIdsOf(tableId: string): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db(),
    sql`select id from rows where table_id = ${tableId} order by position`,
  );
  return rows.map((r) => r.id);
}

describe("GET /api/tables/:id/progress", () => {
  it("answers every group of the schema in schema order, one with no cell included, with neverRun the rows without a cell", async () => {
    const tableId = await ranTable(3);
    const p = await progress(tableId);
    expect(p.rows).toBe(3);
    expect(p.groups.map((g) => g.groupId)).toEqual(["ga", "gb", "gm"]);
    expect(p.groups[0]).toMatchObject({ completed: 3, ok: 3, neverRun: 0, queued: 0 });
    expect(p.groups[2]).toMatchObject({ completed: 0, neverRun: 3 });
    expect(p).toEqual(await fullProgress(db(), tableId));
    expect(await counterFindings(db(), tableId)).toEqual([]);
  });

  it("is 404 for another workspace's table", async () => {
    const tableId = await ranTable(1);
    const other = await newWorkspace("other");
    const res = await apiClient(other.key).GET("/api/tables/{id}/progress", {
      params: { path: { id: tableId } },
    });
    expect(res.response.status).toBe(404);
  });
});

describe("the counters equal a full count", () => {
  it("after a bulk stamp, from one delta per key of the statement, not one per cell", async () => {
    const tableId = await ranTable(400, () => "");
    const before = await deltasOf(db(), tableId);
    const run = await createRun(ctx(), tableId, { mode: "all", groupIds: ["gm"] });
    expect(run.ok).toBe(true);
    const stamped = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from cells where table_id = ${tableId} and group_id = 'gm'`,
    );
    expect(stamped[0]?.n).toBe(400);
    // 400 cells stamped queued, in the statements of the run's first page(s).
    expect((await deltasOf(db(), tableId)) - before).toBeLessThan(10);
    expect((await progress(tableId)).groups[2]).toMatchObject({ queued: 400, neverRun: 0 });
    expect(await counterFindings(db(), tableId)).toEqual([]);
    await carryAll();
    expect((await progress(tableId)).groups[2]).toMatchObject({ completed: 400, queued: 0 });
    expect(await counterFindings(db(), tableId)).toEqual([]);
  });

  it("an update that moves no count (progress, details, a claim's attempt) appends no delta", async () => {
    const tableId = await ranTable(3);
    const before = await deltasOf(db(), tableId);
    await db().execute(
      sql`update cells set details = '{"x": 1}'::jsonb, attempt = attempt + 1,
                           running_block_ids = '{b}' where table_id = ${tableId}`,
    );
    expect(await deltasOf(db(), tableId)).toBe(before);
    expect(await counterFindings(db(), tableId)).toEqual([]);
  });

  it("after an edit's clear of the groups that read the edited column", async () => {
    const tableId = await ranTable(2);
    await foldNow(db());
    const [rowId] = await rowIdsOf(tableId);
    const edited = await patchRow(ctx(), tableId, rowId as string, { data: { src: "changed" } });
    expect(edited.ok).toBe(true);
    // ga re-armed (queued again); gb's cell, downstream, cleared until ga ends.
    const p = await progress(tableId);
    expect(p.groups[0]).toMatchObject({ queued: 1, completed: 1 });
    expect(p.groups[1]).toMatchObject({ completed: 1, neverRun: 1 });
    expect(await counterFindings(db(), tableId)).toEqual([]);
    await carryAll();
    expect(await counterFindings(db(), tableId)).toEqual([]);
  });

  it("after a row delete, its cells and the row gone from the counts", async () => {
    const tableId = await ranTable(3);
    await foldNow(db());
    const [rowId] = await rowIdsOf(tableId);
    expect((await deleteRow(ctx(), tableId, rowId as string)).ok).toBe(true);
    const p = await progress(tableId);
    expect(p.rows).toBe(2);
    expect(p.groups[0]).toMatchObject({ completed: 2, neverRun: 0 });
    expect(await counterFindings(db(), tableId)).toEqual([]);
  });

  it("after a group's removal from the schema: the group is no longer answered, and coming back it counts its cells still there", async () => {
    const tableId = await ranTable(2);
    await foldNow(db());
    const without = await patchTable(ctx(), tableId, {
      groups: groups().filter((g) => g.id !== "gb"),
    });
    expect(without.ok).toBe(true);
    expect((await progress(tableId)).groups.map((g) => g.groupId)).toEqual(["ga", "gm"]);
    expect(await counterFindings(db(), tableId)).toEqual([]);
    expect((await patchTable(ctx(), tableId, { groups: groups() })).ok).toBe(true);
    expect((await progress(tableId)).groups[1]).toMatchObject({ groupId: "gb", completed: 2 });
    expect(await counterFindings(db(), tableId)).toEqual([]);
  });

  it("after a table's delete: its counters go with it and the fold drops the deltas its cascade appended", async () => {
    const tableId = await ranTable(3);
    await foldNow(db());
    expect((await deleteTable(ctx(), tableId)).ok).toBe(true);
    expect(await deltasOf(db(), tableId)).toBeGreaterThan(0);
    await foldNow(db());
    const [left] = await queryRows<Record<string, number>>(
      db(),
      sql`select (select count(*)::int from cell_count_deltas where table_id = ${tableId}) as deltas,
                 (select count(*)::int from cell_counts where table_id = ${tableId}) as cells,
                 (select count(*)::int from table_counts where table_id = ${tableId}) as tables,
                 (select count(*)::int from run_cell_counts r
                   where not exists (select 1 from dispatches d where d.id = r.dispatch_id)) as runs`,
    );
    expect(left).toEqual({ deltas: 0, cells: 0, tables: 0, runs: 0 });
  });
});

describe("the full-count check the model test uses", () => {
  it("notices a group's counter off by one, and a run's", async () => {
    const tableId = await ranTable(2);
    expect(await counterFindings(db(), tableId)).toEqual([]);
    await db().execute(
      sql`update cell_counts set n = n + 1
           where table_id = ${tableId} and group_id = 'ga' and status = 'completed'`,
    );
    const findings = await counterFindings(db(), tableId);
    expect(findings.some((f) => f.startsWith("before a fold: progress"))).toBe(true);
    await db().execute(
      sql`update cell_counts set n = n - 1
           where table_id = ${tableId} and group_id = 'ga' and status = 'completed'`,
    );
    const [run] = await queryRows<{ id: string }>(
      db(),
      sql`select id from dispatches where table_id = ${tableId} limit 1`,
    );
    await db().execute(
      sql`insert into run_cell_counts (dispatch_id, status, n) values (${run?.id}, 'error', 1)
          on conflict (dispatch_id, status) do update set n = run_cell_counts.n + 1`,
    );
    expect((await counterFindings(db(), tableId)).some((f) => f.includes(`run ${run?.id}`))).toBe(
      true,
    );
  });

  it("notices a run's counter of one group off by one", async () => {
    const tableId = await ranTable(2);
    expect(await counterFindings(db(), tableId)).toEqual([]);
    const [run] = await queryRows<{ id: string }>(
      db(),
      sql`select id from dispatches where table_id = ${tableId} and group_counted limit 1`,
    );
    expect(run).toBeDefined();
    await db().execute(
      sql`update run_group_cell_counts set n = n + 1 where dispatch_id = ${run?.id} and status = 'completed'`,
    );
    const findings = await counterFindings(db(), tableId);
    expect(findings.some((f) => f.includes(`run ${run?.id} counts by group`))).toBe(true);
  });
});

describe("a run's counters per group", () => {
  it("are kept by the database as the fold takes the deltas, equal to a full count by group", async () => {
    const tableId = await ranTable(3);
    await createRun(ctx(), tableId, { mode: "all", groupIds: ["gm", "ga"] });
    const [run] = await queryRows<{ id: string }>(
      db(),
      sql`select id from dispatches where table_id = ${tableId} and group_ids @> '{gm}'`,
    );
    const id = run?.id ?? "";
    await foldNow(db());
    expect(await deltasOf(db(), tableId)).toBe(0);
    // All in the base now (no delta left): the fold's delete added them there.
    expect(await runGroupCounts(db(), id)).toEqual({ "ga/queued": 3, "gm/queued": 3 });
    await carryAll();
    await foldNow(db());
    expect(await runGroupCounts(db(), id)).toEqual(await fullRunGroupCounts(db(), id));
    expect(await runGroupCounts(db(), id)).toMatchObject({ "ga/completed": 3, "gm/completed": 3 });
    expect(await counterFindings(db(), tableId)).toEqual([]);
  });

  it("a delta of a run deleted before the fold is dropped, and the fold goes on", async () => {
    const tableId = await ranTable(1);
    const [run] = await queryRows<{ id: string }>(
      db(),
      sql`insert into dispatches (id, table_id, group_ids, mode, "window")
          values ('run_gone_' || md5(random()::text), ${tableId}, '{gm}', 'all', 1) returning id`,
    );
    await db().execute(
      sql`insert into cell_count_deltas (table_id, group_id, dispatch_id, status, n)
          values (${tableId}, 'gm', ${run?.id}, 'queued', 1)`,
    );
    await db().execute(sql`delete from dispatches where id = ${run?.id}`);
    await foldNow(db());
    expect(await deltasOf(db(), tableId)).toBe(0);
    const [left] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from run_group_cell_counts where dispatch_id = ${run?.id}`,
    );
    expect(left?.n).toBe(0);
  });
});

describe("the fold", () => {
  it("does not count a delta twice when folds meet: one waiting on another's lock skips, the next one folds what both left", async () => {
    const tableId = await ranTable(2);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query("begin");
      // The fold's own lock, held as a fold in flight would hold it.
      await holder.query("select pg_advisory_xact_lock(7461113030)");
      expect(await foldCounts(db())).toBeNull();
      const [rowId] = await rowIdsOf(tableId);
      expect((await deleteRow(ctx(), tableId, rowId as string)).ok).toBe(true);
      await holder.query("commit");
    } finally {
      await holder.end();
    }
    const folds = await Promise.all([foldCounts(db()), foldCounts(db()), foldCounts(db())]);
    expect(folds.filter((f) => f !== null).length).toBeGreaterThanOrEqual(1);
    expect(await counterFindings(db(), tableId)).toEqual([]);
  });

  it("sends a progress event when counts moved, at most once a second, and none when nothing changed", async () => {
    const tableId = await ranTable(2);
    const events = async () =>
      queryRows<{ data: unknown }>(
        db(),
        sql`select data from events where table_id = ${tableId} and kind = 'progress' order by id`,
      );
    await foldNow(db());
    const first = await events();
    expect(first).toHaveLength(1);
    expect(ProgressEventData.parse(first[0]?.data)).toEqual(await readProgress(db(), { tableId }));
    await foldNow(db());
    expect(await events()).toHaveLength(1);
    const [rowId] = await rowIdsOf(tableId);
    expect((await deleteRow(ctx(), tableId, rowId as string)).ok).toBe(true);
    // Within the second of the last event: kept pending, not sent.
    await foldNow(db());
    expect(await events()).toHaveLength(1);
    await db().execute(
      sql`update table_counts set progress_sent_at = now() - interval '2 seconds' where table_id = ${tableId}`,
    );
    await foldNow(db());
    const all = await events();
    expect(all).toHaveLength(2);
    expect(ProgressEventData.parse(all[1]?.data).rows).toBe(1);
  });
});

describe("the migration's backfill", () => {
  it("counts the cells and rows that were there before the counters", async () => {
    const tableId = await ranTable(3);
    await createRun(ctx(), tableId, { mode: "all", groupIds: ["gm"] });
    const file = fs
      .readdirSync(MIGRATIONS_DIR)
      .find((f) => f.endsWith("_progress_counter_triggers.sql"));
    const statements = fs
      .readFileSync(path.join(MIGRATIONS_DIR, file ?? ""), "utf8")
      .split("--> statement-breakpoint")
      .filter((s) => /^\s*INSERT INTO (cell_counts|run_cell_counts|table_counts)/m.test(s));
    expect(statements).toHaveLength(3);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("begin");
      // The database as it was before the migration: no counters at all (and so no counters
      // per group either, which a later migration made, for the runs after it only).
      await client.query(
        "delete from cell_counts; delete from run_cell_counts; delete from table_counts; delete from cell_count_deltas",
      );
      await client.query(
        "delete from run_group_cell_counts; update dispatches set group_counted = false",
      );
      for (const s of statements) await client.query(s);
      await client.query("commit");
    } finally {
      await client.end();
    }
    expect(await deltasOf(db(), tableId)).toBe(0);
    expect(await readProgress(db(), { tableId })).toEqual(await fullProgress(db(), tableId));
    expect((await progress(tableId)).groups[2]).toMatchObject({ queued: 3 });
    expect(await counterFindings(db(), tableId)).toEqual([]);
  });
});

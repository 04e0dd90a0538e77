/**
 * A Stop with a `where` records the rows it matched as ranges of positions (`stop_ranges`),
 * one per unbroken stretch of matches in position order. Invariants: the ranges name
 * exactly the rows that matched at the Stop (a deleted row inside a stretch does not split
 * it; a row added after it is outside every range); a large one's count equals what reads
 * show as cancelled, whether it comes off the run's counters less the cells between the
 * ranges (most rows matched) or from the cells in the ranges (few did), and counts no cell
 * an earlier Stop covered; deleting covered rows keeps the counts exact; the run it leaves
 * work in (a queued or a running cell) goes on, one it empties ends; the
 * migration from the list of rows keeps what old Stops covered, and the list's old name
 * still reads the same rows.
 */
import fs from "node:fs";
import path from "node:path";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { startRun } from "@/engine/dispatcher";
import { stopRuns } from "@/engine/stop";
import { getDispatch } from "@/store/dispatches/read";
import { effectiveStatus, textArray } from "@/store/sql";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { RecordingBackend } from "../helpers/engine-harness";
import { newWorkspace } from "../helpers/fixtures";
import { expectProgressExact, foldNow } from "../helpers/progress";
import { transformTable } from "../helpers/tables";

let key: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

const ROWS = 30;
/** Rows 0–9, 14 and 20–29 have b = 1: 21 of 30, in three stretches. */
const MOST = new Set([...Array.from({ length: 10 }, (_, i) => i), 14, ...range(20, 30)]);
const b1 = [{ column: "b", type: "number" as const, op: "eq" as const, value: 1 }];

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}

/** A table of groups g and h over ROWS rows, row i with b = 1 when `ones` has i. */
async function table(ones: ReadonlySet<number>): Promise<{ tableId: string; rowIds: string[] }> {
  return transformTable(key, {
    groups: ["g", "h"],
    columns: [{ id: "b", name: "b", type: "number" }],
    rows: range(0, ROWS).map((i) => ({ b: ones.has(i) ? 1 : 0 })),
  });
}

/** A run of both groups over every row, its counts folded. */
async function run(tableId: string): Promise<{ dispatchId: string; backend: RecordingBackend }> {
  const backend = new RecordingBackend();
  const r = await startRun(
    { db: db(), backend },
    { tableId, groupIds: ["g", "h"], mode: "all", rowIds: null, limit: null, window: 5 },
  );
  await foldNow(db());
  return { dispatchId: r.dispatchId, backend };
}

async function ranges(tableId: string): Promise<[number, number][]> {
  const rows = await queryRows<{ lo: number; hi: number }>(
    db(),
    sql`select sr.lo::int as lo, sr.hi::int as hi from stop_ranges sr join stops s on s.seq = sr.seq
         where s.table_id = ${tableId} order by sr.seq, sr.lo`,
  );
  return rows.map((r) => [r.lo, r.hi]);
}

async function positions(rowIds: readonly string[]): Promise<number[]> {
  const rows = await queryRows<{ p: number }>(
    db(),
    sql`select position::int as p from rows where id = any(${textArray(rowIds)}) order by 1`,
  );
  return rows.map((r) => r.p);
}

/** The row indexes whose cell of `group` reads as cancelled. */
async function cancelledRows(tableId: string, rowIds: string[], group: string): Promise<number[]> {
  const rows = await queryRows<{ rowId: string }>(
    db(),
    sql`select row_id as "rowId" from cells
         where table_id = ${tableId} and group_id = ${group}
           and cellflow_cell_status(status, dispatch_id, row_id, group_id) = 'cancelled'`,
  );
  return rows.map((r) => rowIds.indexOf(r.rowId)).sort((a, b) => a - b);
}

/** Makes the run's counter of g's queued cells 100 too high: an answer off it shows that. */
async function miscount(dispatchId: string): Promise<void> {
  await db().execute(
    sql`update run_group_cell_counts set n = n + 100
         where dispatch_id = ${dispatchId} and group_id = 'g' and status = 'queued'`,
  );
}

describe("a where Stop's rows as ranges of positions", () => {
  it("one range per unbroken stretch of matches; a deleted row inside one does not split it; a row added later is outside", async () => {
    const { tableId, rowIds } = await table(MOST);
    const gone = rowIds[5] ?? "";
    await db().execute(sql`delete from rows where id = ${gone}`);
    await run(tableId);
    await stopRuns({ db: db(), backend: new RecordingBackend() }, { tableId, where: b1 });
    const p = await positions(rowIds);
    // Row 5 is deleted: p has 29 entries, and row i > 5 sits at p[i - 1].
    const at = (i: number) => p[i > 5 ? i - 1 : i] ?? -1;
    expect(await ranges(tableId)).toEqual([
      [at(0), at(9)],
      [at(14), at(14)],
      [at(20), at(29)],
    ]);
    const added = await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
      body: { rows: [{ data: { b: 1 } }] },
    });
    const [late] = await positions(dataOf(added).rows.map((r) => r.id));
    const [probe] = await queryRows<{ late: boolean; first: boolean; between: boolean }>(
      db(),
      sql`select cellflow_in_stop(s.seq, ${late}::bigint) as late,
                 cellflow_in_stop(s.seq, ${at(0)}::bigint) as first,
                 cellflow_in_stop(s.seq, ${at(12)}::bigint) as between
            from stops s where s.table_id = ${tableId} and s.matched`,
    );
    expect(probe).toEqual({ late: false, first: true, between: false });
    // A run made after the Stop stamps the added row, and reads show its cell queued.
    const lateId = dataOf(added).rows[0]?.id ?? "";
    await startRun(
      { db: db(), backend: new RecordingBackend() },
      { tableId, groupIds: ["g"], mode: "all", rowIds: [lateId], limit: null, window: 5 },
    );
    const [cell] = await queryRows<{ status: string }>(
      db(),
      sql`select ${effectiveStatus("c")}::text as status from cells c where c.row_id = ${lateId}`,
    );
    expect(cell?.status).toBe("queued");
  });

  it("deleting rows it covers before the rewrite keeps every count exact", async () => {
    const { tableId, rowIds } = await table(MOST);
    const { backend } = await run(tableId);
    await stopRuns({ db: db(), backend, stopEagerUpTo: 3 }, { tableId, where: b1 });
    // Rows 0–2 are covered; row 12 is not. Their cells go with them (the cascade), and the
    // count trigger judges them by their own positions, their rows already gone.
    const gone = [rowIds[0] ?? "", rowIds[1] ?? "", rowIds[2] ?? "", rowIds[12] ?? ""];
    await db().execute(sql`delete from rows where id = any(${textArray(gone)})`);
    await expectProgressExact(db(), tableId);
    await foldNow(db());
    await expectProgressExact(db(), tableId);
  });

  it("a run left with a running cell outside the where stays active", async () => {
    const all = new Set(range(0, ROWS).filter((i) => i !== 10));
    const { tableId, rowIds } = await table(all);
    const backend = new RecordingBackend();
    const r = await startRun(
      { db: db(), backend },
      { tableId, groupIds: ["g"], mode: "all", rowIds: null, limit: null, window: 5 },
    );
    await db().execute(
      sql`update cells set status = 'running' where row_id = ${rowIds[10] ?? ""} and group_id = 'g'`,
    );
    const stop = await stopRuns({ db: db(), backend, stopEagerUpTo: 3 }, { tableId, where: b1 });
    expect(stop.cancelled).toBe(all.size);
    expect((await getDispatch(db(), tableId, r.dispatchId))?.status).toBe("active");
  });

  it("a where Stop naming rows records each matching one as its own range", async () => {
    const { tableId, rowIds } = await table(MOST);
    await run(tableId);
    const named = [rowIds[1] ?? "", rowIds[2] ?? "", rowIds[12] ?? "", rowIds[14] ?? ""];
    await stopRuns(
      { db: db(), backend: new RecordingBackend() },
      { tableId, where: b1, rowIds: named },
    );
    const p = await positions([rowIds[1] ?? "", rowIds[2] ?? "", rowIds[14] ?? ""]);
    expect(await ranges(tableId)).toEqual(p.map((x) => [x, x]));
  });

  it("one that matched most rows takes its number off the run's counters less the cells between its ranges", async () => {
    const { tableId } = await table(MOST);
    const { dispatchId, backend } = await run(tableId);
    await miscount(dispatchId);
    const stop = await stopRuns({ db: db(), backend, stopEagerUpTo: 3 }, { tableId, where: b1 });
    // 21 rows × 2 groups, and the counter made 100 too high shows the count came off it.
    expect(stop.cancelled).toBe(2 * MOST.size + 100);
  });

  it("and that count equals what reads show; the run goes on with the rest", async () => {
    const { tableId, rowIds } = await table(MOST);
    const { dispatchId, backend } = await run(tableId);
    const stop = await stopRuns({ db: db(), backend, stopEagerUpTo: 3 }, { tableId, where: b1 });
    expect(stop.cancelled).toBe(2 * MOST.size);
    for (const g of ["g", "h"]) expect(await cancelledRows(tableId, rowIds, g)).toEqual([...MOST]);
    await expectProgressExact(db(), tableId);
    expect((await getDispatch(db(), tableId, dispatchId))?.status).toBe("active");
  });

  it("one that matched few rows counts the cells in its ranges", async () => {
    const few = new Set([3, 4, 17]);
    const { tableId, rowIds } = await table(few);
    const { dispatchId, backend } = await run(tableId);
    await miscount(dispatchId);
    const stop = await stopRuns({ db: db(), backend, stopEagerUpTo: 3 }, { tableId, where: b1 });
    expect(stop.cancelled).toBe(2 * few.size);
    for (const g of ["g", "h"]) expect(await cancelledRows(tableId, rowIds, g)).toEqual([...few]);
  });

  it("after a Stop of one group, a where Stop counts only the other group's cells it matched", async () => {
    const { tableId, rowIds } = await table(MOST);
    const { dispatchId, backend } = await run(tableId);
    const first = await stopRuns(
      { db: db(), backend, stopEagerUpTo: 3 },
      { tableId, groupIds: ["g"] },
    );
    expect(first.cancelled).toBe(ROWS);
    const stop = await stopRuns({ db: db(), backend, stopEagerUpTo: 3 }, { tableId, where: b1 });
    expect(stop.cancelled).toBe(MOST.size);
    expect(await cancelledRows(tableId, rowIds, "h")).toEqual([...MOST]);
    await expectProgressExact(db(), tableId);
    expect((await getDispatch(db(), tableId, dispatchId))?.status).toBe("active");
  });

  it("a where Stop that matched every row left ends the run cancelled", async () => {
    const every = new Set(range(0, ROWS));
    const { tableId } = await table(every);
    const { dispatchId, backend } = await run(tableId);
    const stop = await stopRuns({ db: db(), backend, stopEagerUpTo: 3 }, { tableId, where: b1 });
    expect(stop.cancelled).toBe(2 * ROWS);
    expect((await getDispatch(db(), tableId, dispatchId))?.status).toBe("cancelled");
  });
});

describe("the move from a list of rows to ranges", () => {
  it("the migration turns each listed row into a range at its position, and stop_rows still reads the rows a Stop covers", async () => {
    const { tableId, rowIds } = await table(MOST);
    await run(tableId);
    await stopRuns({ db: db(), backend: new RecordingBackend() }, { tableId, where: b1 });
    // The compat view names exactly the matched rows.
    const listed = await queryRows<{ rowId: string }>(
      db(),
      sql`select sr.row_id as "rowId" from stop_rows sr join stops s on s.seq = sr.seq
           where s.table_id = ${tableId}`,
    );
    expect(listed.map((r) => rowIds.indexOf(r.rowId)).sort((a, b) => a - b)).toEqual([...MOST]);
    const refused = await db()
      .execute(sql`insert into stop_rows (seq, row_id) select seq, ${rowIds[0] ?? ""} from stops
                    where table_id = ${tableId}`)
      .then(
        () => null,
        (e: unknown) => String((e as { cause?: unknown }).cause ?? e),
      );
    expect(refused).toMatch(/cannot insert into view "stop_rows"/);
    // The migration's copy, run against a list as the version before kept it.
    const file = fs.readFileSync(
      path.resolve(import.meta.dirname, "../../db/migrations/0072_stop_ranges_covered.sql"),
      "utf8",
    );
    // Its lock of the list, then its copy.
    const [lock = "", copy = ""] = file.split("--> statement-breakpoint");
    const [stop] = await queryRows<{ seq: number }>(
      db(),
      sql`insert into stops (table_id, matched) values (${tableId}, true) returning seq::int as seq`,
    );
    const seq = stop?.seq ?? 0;
    await db().transaction(async (tx) => {
      await tx.execute(sql`create temp table stop_rows (seq bigint, row_id text)`);
      await tx.execute(
        sql`insert into pg_temp.stop_rows values (${seq}, ${rowIds[3] ?? ""}), (${seq}, ${rowIds[7] ?? ""}), (${seq}, 'row_gone')`,
      );
      await tx.execute(sql.raw(lock));
      await tx.execute(sql.raw(copy));
      await tx.execute(sql`drop table pg_temp.stop_rows`);
    });
    const p = await positions([rowIds[3] ?? "", rowIds[7] ?? ""]);
    const [moved] = await queryRows<{ r: [number, number][] }>(
      db(),
      sql`select jsonb_agg(jsonb_build_array(lo, hi) order by lo) as r from stop_ranges where seq = ${seq}`,
    );
    expect(moved?.r).toEqual(p.map((x) => [x, x]));
  });
});

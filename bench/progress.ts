/**
 * `BENCH_ONLY=progress npm run bench`: the progress read at a million rows. A table of
 * BENCH_PROGRESS_ROWS rows (default 1,000,000) and four groups, its cells written straight
 * in SQL (generate_series: one statement per group, through the counters' triggers like
 * any write), one run owning a group's cells; folded, then a backlog of single-cell
 * transitions left unfolded (a second of a busy run), then `GET /progress` and
 * `GET /runs/:id` timed through their service calls (what the routes do).
 */
import { type Database, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { TaskBackend } from "@/backends/port";
import { log } from "@/config/log";
import type { ServiceContext } from "@/services/context";
import { getProgress } from "@/services/progress";
import { getRun } from "@/services/runs";
import { createDispatch } from "@/store/dispatches/create";
import { foldCounts } from "@/store/progress/fold";
import { median } from "./figures";
import { benchDatabase, benchTable, noop, percentile } from "./setup";

const GROUPS = ["ga", "gb", "gc", "gd"];

export interface ProgressFigures {
  rows: number;
  buildMs: number;
  unfoldedDeltas: number;
  progressMs: { p50: number; p99: number };
  runMs: { p50: number; p99: number };
  /** Server time of a one-cell status update, with the counters' trigger and without. */
  updateUs: { withCounters: number; without: number };
}

export async function progressRead(
  adminUrl: string,
  rows: number,
  reads: number,
  backlog: number,
): Promise<ProgressFigures> {
  const { database } = await benchDatabase(adminUrl);
  const db = database.db;
  try {
    const tableId = await benchTable(
      database,
      GROUPS.map((g) => `c_${g}`),
      GROUPS.map((g) => ({
        id: g,
        definition: noop("n"),
        output: { columnId: `c_${g}`, from: "n" },
      })),
      [],
    );
    const [ws] = await queryRows<{ id: string }>(
      db,
      sql`select workspace_id as id from tables where id = ${tableId}`,
    );
    const dispatchId = await createDispatch(db, {
      tableId,
      groupIds: ["ga"],
      mode: "all",
      rowIds: null,
      rowLimit: null,
      window: 50,
    });
    const built = performance.now();
    await db.execute(
      sql`insert into rows (id, table_id, position, data)
          select 'row_' || i, ${tableId}, i, '{}'::jsonb from generate_series(1, ${rows}) i`,
    );
    // As `insertRows` keeps it (the listings and the plan's cap read it).
    await db.execute(sql`update tables set row_count = row_count + ${rows} where id = ${tableId}`);
    // Per group a different mix: done (three outcomes), failed, queued, running, never run.
    for (const [n, g] of GROUPS.entries()) {
      await db.execute(
        sql`insert into cells (table_id, row_id, group_id, row_position, status, outcome,
                               execution_id, dispatch_id)
            select ${tableId}, 'row_' || i, ${g}, i,
                   (case when (i + ${n}) % 10 < 6 then 'completed' when (i + ${n}) % 10 = 6 then 'error'
                         when (i + ${n}) % 10 = 7 then 'queued' else 'running' end)::cell_status,
                   (case when (i + ${n}) % 10 < 4 then 'ok' when (i + ${n}) % 10 = 4 then 'not_found'
                         when (i + ${n}) % 10 = 5 then 'skipped' end)::cell_outcome,
                   'ex_' || ${g} || '_' || i, ${g === "ga" ? dispatchId : null}
              from generate_series(1, ${rows}) i where (i + ${n}) % 10 <> 9`,
      );
    }
    const buildMs = performance.now() - built;
    while (((await foldCounts(db))?.deltas ?? 1) > 0);
    // A backlog as a busy second of a run leaves it: single-cell transitions, unfolded.
    await db.execute(
      sql`do $$ begin
            for k in 1..${sql.raw(String(backlog))} loop
              update cells set status = 'running' where row_id = 'row_' || (k * 10 + 8)::text and group_id = 'ga';
              update cells set status = 'completed', outcome = 'ok'
               where row_id = 'row_' || (k * 10 + 8)::text and group_id = 'ga';
            end loop;
          end $$`,
    );
    const [d] = await queryRows<{ n: number }>(
      db,
      sql`select count(*)::int as n from cell_count_deltas where table_id = ${tableId}`,
    );
    await db.execute(sql`analyze`);
    // Reads only: nothing is enqueued.
    const backend: TaskBackend = {
      kind: "local",
      remoteCancel: false,
      enqueue: async () => {},
      cancelRun: async () => ({ ok: true, value: "gone" }),
      close: async () => {},
    };
    const ctx: ServiceContext = { db, workspaceId: ws?.id ?? "", log: log(), backend };
    const time = async (read: () => Promise<{ ok: boolean }>) => {
      const ms: number[] = [];
      for (let i = 0; i < reads + 20; i++) {
        const t0 = performance.now();
        const r = await read();
        if (!r.ok) throw new Error("the read failed");
        if (i >= 20) ms.push(performance.now() - t0);
      }
      return { p50: +percentile(ms, 50).toFixed(2), p99: +percentile(ms, 99).toFixed(2) };
    };
    const progress = await getProgress(ctx, tableId);
    if (!progress.ok || progress.value.rows !== rows)
      throw new Error(`progress read ${JSON.stringify(progress)}`);
    const updateUs = await updateCost(db, Math.min(rows, 200));
    return {
      rows,
      buildMs: Math.round(buildMs),
      updateUs,
      unfoldedDeltas: d?.n ?? 0,
      progressMs: await time(() => getProgress(ctx, tableId)),
      runMs: await time(() => getRun(ctx, tableId, dispatchId)),
    };
  } finally {
    await database.close();
  }
}

/**
 * What the counters' update trigger adds to a one-cell transition, measured on the server
 * (a DO block of single-row updates timed inside it: no round trip, no client), the
 * trigger on and off alternating over the rounds (and which goes first), so the machine's
 * load falls on both alike. Median µs per update.
 */
async function updateCost(
  db: Database["db"],
  cells: number,
): Promise<{ withCounters: number; without: number }> {
  await db.execute(sql`create table if not exists bench_update_cost (counters boolean, us float8)`);
  const arm = (counters: boolean) =>
    sql.raw(`do $$ declare t0 timestamptz; begin
      execute 'alter table cells ${counters ? "enable" : "disable"} trigger cells_count_updated';
      t0 := clock_timestamp();
      for k in 1..${cells} loop
        update cells set status = (case when status = 'running' then 'queued' else 'running' end)::cell_status
         where row_id = 'row_' || k::text and group_id = 'gb';
      end loop;
      insert into bench_update_cost values (${counters},
        extract(epoch from clock_timestamp() - t0) * 1e6 / ${cells});
    end $$`);
  for (let round = 0; round < 10; round++) {
    const first = round % 2 === 0;
    await db.execute(arm(first));
    await db.execute(arm(!first));
  }
  await db.execute(sql`alter table cells enable trigger cells_count_updated`);
  const rows = await queryRows<{ counters: boolean; us: number }>(
    db,
    sql`select counters, us from bench_update_cost`,
  );
  const med = (on: boolean) =>
    +median(rows.filter((r) => r.counters === on).map((r) => r.us)).toFixed(1);
  return { withCounters: med(true), without: med(false) };
}

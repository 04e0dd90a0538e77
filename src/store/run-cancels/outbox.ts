/**
 * The run-cancel outbox (table `run_cancels`). Guarantees: a run id is in it at most once
 * (a second Stop of the same run adds nothing); a row is handed to one drainer at a time
 * (a lease, taken with SKIP LOCKED so drainers never wait on each other), and a drainer
 * that died without a word loses its rows when the lease runs out; a row leaves only when
 * its cancel is settled (done, the run gone, or given up on) or the run is spared (it
 * still carries work the Stop did not cover, `spareRunCancel`).
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { coveredCell, textArray } from "../sql";

export interface PendingCancel {
  runId: string;
  tableId: string;
  /** Tries so far, this one included. */
  attempts: number;
  /** Age of the row, ms: a cancel stuck for very long is given up on. */
  ageMs: number;
}

/** A run a Stop found carrying one of the cells it cancelled, and that cell's row. */
export interface RunOnRow {
  runId: string;
  rowId: string;
}

/**
 * Adds runs to cancel; call it in the transaction that made their cells `cancelled`.
 * `cascadeGroups`: the auto-run groups the Stop left unheld (a run whose row lacks one
 * may still stamp it, so `spareRunCancel` keeps it alive). A run already waiting keeps
 * what its first Stop wrote: that can only spare it where a later Stop would not have.
 */
export async function addRunCancels(
  db: Db,
  cancels: { tableId: string; runs: readonly RunOnRow[]; cascadeGroups: readonly string[] },
): Promise<void> {
  const { tableId, runs, cascadeGroups } = cancels;
  if (runs.length === 0) return;
  await db.execute(
    sql`insert into run_cancels (run_id, table_id, row_id, cascade_groups)
        select r.run_id, ${tableId}, r.row_id, ${textArray([...cascadeGroups])}
          from unnest(${textArray(runs.map((r) => r.runId))}, ${textArray(runs.map((r) => r.rowId))})
               as r(run_id, row_id)
        on conflict (run_id) do nothing`,
  );
}

/**
 * Drops the run's cancel, without a call, when the run still carries work the Stop did
 * not cover: its row has a queued or running cell (the run's carrier holds the row and
 * takes them next), or lacks a cell of an auto-run group the Stop left unheld (the
 * carrier may still stamp it). Read now, just before the call, so the verdict is on the
 * state the cancel would act on; the stopped attempt meanwhile sees its tombstone by
 * itself and the run goes on or ends. A table delete's runs (no row) are never spared.
 * Returns whether the run was spared.
 */
export async function spareRunCancel(db: Db, runId: string): Promise<boolean> {
  const rows = await queryRows<{ one: number }>(
    db,
    sql`delete from run_cancels rc
         where rc.run_id = ${runId} and rc.row_id is not null
           and (exists (select 1 from cells c
                         where c.row_id = rc.row_id and c.status in ('queued', 'running')
                           and not (c.status = 'queued' and ${coveredCell("c")}))
                or (exists (select 1 from rows r where r.id = rc.row_id)
                    and exists (select 1 from unnest(rc.cascade_groups) g(id)
                                 where not exists (select 1 from cells c
                                                    where c.row_id = rc.row_id and c.group_id = g.id))))
     returning 1 as one`,
  );
  return rows.length > 0;
}

/** Takes up to `limit` due rows for `leaseMs`, oldest due first. */
export async function leaseRunCancels(
  db: Db,
  limit: number,
  leaseMs: number,
): Promise<PendingCancel[]> {
  return queryRows<PendingCancel>(
    db,
    sql`update run_cancels r
           set leased_until = now() + make_interval(secs => ${leaseMs / 1000}),
               attempts = r.attempts + 1
         where r.run_id in (
           select run_id from run_cancels
            where due_at <= now() and (leased_until is null or leased_until <= now())
            order by due_at
            limit ${limit}
            for update skip locked)
     returning r.run_id as "runId", r.table_id as "tableId", r.attempts,
               (extract(epoch from now() - r.created_at) * 1000)::float8 as "ageMs"`,
  );
}

/** The cancel is settled: the row goes. */
export async function settleRunCancel(db: Db, runId: string): Promise<void> {
  await db.execute(sql`delete from run_cancels where run_id = ${runId}`);
}

/** Tries the row again after `delayMs`, for any drainer. */
export async function retryRunCancel(
  db: Db,
  runId: string,
  delayMs: number,
  error: string,
): Promise<void> {
  await db.execute(
    sql`update run_cancels
           set due_at = now() + make_interval(secs => ${delayMs / 1000}),
               leased_until = null,
               last_error = ${error.slice(0, 500)}
         where run_id = ${runId}`,
  );
}

/** Rows waiting, leased or not. */
export async function countRunCancels(db: Db): Promise<number> {
  const [row] = await queryRows<{ n: number }>(db, sql`select count(*)::int as n from run_cancels`);
  return row?.n ?? 0;
}

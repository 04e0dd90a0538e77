/**
 * The run-cancel outbox (table `run_cancels`). Guarantees: a run id is in it at most once
 * (a second Stop of the same run adds nothing); a row is handed to one drainer at a time
 * (a lease, taken with SKIP LOCKED so drainers never wait on each other), and a drainer
 * that died without a word loses its rows when the lease runs out; a row leaves only when
 * its cancel is settled (done, the run gone, or given up on).
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { textArray } from "../sql";

export interface PendingCancel {
  runId: string;
  tableId: string;
  /** Tries so far, this one included. */
  attempts: number;
  /** Age of the row, ms: a cancel stuck for very long is given up on. */
  ageMs: number;
}

/** Adds runs to cancel; call it in the transaction that made their cells `cancelled`. */
export async function addRunCancels(
  db: Db,
  cancels: { tableId: string; runIds: string[] },
): Promise<void> {
  const { tableId, runIds } = cancels;
  if (runIds.length === 0) return;
  await db.execute(
    sql`insert into run_cancels (run_id, table_id)
        select unnest(${textArray(runIds)}), ${tableId}
        on conflict (run_id) do nothing`,
  );
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

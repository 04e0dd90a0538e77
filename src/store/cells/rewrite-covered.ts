/**
 * The rewrite of a large Stop's covered cells (db/schema/cancel-scopes.ts) into real
 * `cancelled` cells, one batch per transaction. Invariants: it only rewrites a cell still
 * queued under the scope's run and matching it (so a cell a new run re-stamped meanwhile is
 * left alone), and skips cells another transaction holds (`skip locked`: it never waits on,
 * nor fights, a new run's stamp); the counts do not move (the count trigger already took a
 * covered cell as `cancelled`), so they equal a full count after every batch; it writes no
 * events (the Stop told the grid); the scope is deleted, in the batch that finds nothing of
 * it left, only then. Everything it needs is in the tables: a crash between batches loses
 * nothing, the next pass goes on.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

/** How many cells one batch rewrites (one transaction). */
export const REWRITE_BATCH = 10_000;

/** Cell `c` is queued under scope `s`'s run and matches it. */
const underScope = sql`c.dispatch_id = s.dispatch_id and c.status = 'queued'
  and (s.group_ids is null or c.group_id = any(s.group_ids))
  and (s.row_ids is null or c.row_id = any(s.row_ids))
  and (s.stop_seq is null or cellflow_in_stop(s.stop_seq, c.row_position))`;

export interface RewriteBatch {
  /** The scope worked on (null: none left to take). */
  scope: { tableId: string; dispatchId: string } | null;
  rewritten: number;
  /** The scope was emptied and deleted. */
  done: boolean;
}

export async function rewriteCoveredBatch(
  db: Db,
  limit: number = REWRITE_BATCH,
): Promise<RewriteBatch> {
  return db.transaction(async (tx) => {
    const [row] = await queryRows<{
      id: string | null;
      tableId: string | null;
      dispatchId: string | null;
      n: number;
    }>(
      tx,
      sql`with s as (
            select id, table_id, dispatch_id, group_ids, row_ids, stop_seq from cancel_scopes
             order by created_at, id limit 1
             for update skip locked
          ),
          pick as (
            select c.row_id, c.group_id from cells c, s where ${underScope}
             limit ${limit}
             for update of c skip locked
          ),
          -- The picked keys as arrays, unnested into the update: joined to the CTE itself, the
          -- planner took its row estimate (a few rows) and scanned every queued cell once per
          -- picked one (minutes a batch while a run's carriers kept the table busy); over an
          -- unnest it probes the primary key once per key.
          keys as (select array_agg(row_id) as r, array_agg(group_id) as g from pick),
          upd as (
            update cells c set status = 'cancelled', finished_at = now(), running_block_ids = '{}', updated_at = now()
              from unnest((select r from keys), (select g from keys)) as p(row_id, group_id)
             where c.row_id = p.row_id and c.group_id = p.group_id and c.status = 'queued'
            returning 1
          )
          select (select id::text from s) as id, (select table_id from s) as "tableId",
                 (select dispatch_id from s) as "dispatchId", (select count(*) from upd)::int as n`,
    );
    if (!row?.id || !row.tableId || !row.dispatchId)
      return { scope: null, rewritten: 0, done: false };
    const scope = { tableId: row.tableId, dispatchId: row.dispatchId };
    if (row.n >= limit) return { scope, rewritten: row.n, done: false };
    // Fewer than a batch: maybe nothing is left (a cell another transaction holds still
    // counts, and keeps the scope for the next pass).
    const gone = await queryRows<{ id: string }>(
      tx,
      sql`delete from cancel_scopes s
           where s.id = ${row.id}::uuid
             and not exists (select 1 from cells c where ${underScope})
          returning s.id`,
    );
    return { scope, rewritten: row.n, done: gone.length > 0 };
  });
}

/**
 * The sliding window. In flight = rows of the dispatch at or before its cursor that
 * still have a queued or running cell; that number is derived, never counted up and
 * down, so a duplicate carrier or a re-drive calling this again cannot skew it. Under
 * the dispatch's row lock, the cursor moves past the next `window - in flight` rows
 * that still have queued cells, and those rows are returned for carriers. When nothing
 * of the dispatch is queued or running any more, the same transaction completes it.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";

export interface Advance {
  /** Rows to hand to carriers now, in position order. */
  rowIds: string[];
  completed: boolean;
}

export async function advanceDispatch(db: Db, dispatchId: string): Promise<Advance> {
  return db.transaction(async (tx) => {
    // Statement 1 takes the lock; statement 2 runs on a fresh snapshot that sees every
    // cell change committed before the lock was granted.
    const [locked] = await queryRows<{ id: string }>(
      tx,
      sql`select id from dispatches where id = ${dispatchId} and status = 'active' for update`,
    );
    if (!locked) return { rowIds: [], completed: false };
    const [step] = await queryRows<{ row_ids: string[] | null; completed: boolean }>(
      tx,
      sql`with d as (select id, table_id, "cursor", "window", group_ids from dispatches where id = ${dispatchId}),
          flying as (
            select count(distinct c.row_id)::int as n from cells c, d
             where c.dispatch_id = d.id and c.status in ('queued', 'running') and c.row_position <= d."cursor"
          ),
          room as (select greatest(d."window" - flying.n, 0) as k, cardinality(d.group_ids) as g from d, flying),
          -- Each row has at most g cells, so the first k rows lie within the first k·g cells:
          -- the index walk stops there instead of sorting every queued cell of the dispatch.
          nxt_cells as (
            select c.row_id, c.row_position from cells c, d
             where c.dispatch_id = d.id and c.status = 'queued' and c.row_position > d."cursor"
             order by c.row_position
             limit (select k * g from room)
          ),
          nxt as (
            select distinct row_id, row_position from nxt_cells order by row_position limit (select k from room)
          ),
          moved as (
            update dispatches set "cursor" = (select max(row_position) from nxt), updated_at = now()
             where id = ${dispatchId} and exists (select 1 from nxt)
            returning id
          ),
          done as (
            update dispatches set status = 'completed', finished_at = now(), updated_at = now()
             where id = ${dispatchId} and status = 'active'
               and not exists (select 1 from nxt)
               and not exists (select 1 from cells c where c.dispatch_id = ${dispatchId} and c.status in ('queued', 'running'))
            returning id, table_id
          ),
          ev as (
            insert into events (table_id, kind, data)
            select table_id, 'dispatch', jsonb_build_object('dispatchId', id, 'status', 'completed') from done
            returning table_id
          ),
          wake as (select pg_notify('cellflow_events', table_id) from ev)
          select (select array_agg(row_id order by row_position) from nxt) as row_ids,
                 exists (select 1 from done) as completed,
                 (select count(*) from wake) as woke,
                 (select count(*) from moved) as moved`,
    );
    return { rowIds: step?.row_ids ?? [], completed: step?.completed ?? false };
  });
}

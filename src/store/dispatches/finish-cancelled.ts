import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";

/**
 * After a Stop: active dispatches of the table (or the one named) that are done stamping
 * and have nothing queued or running left become `cancelled`, each with its `dispatch`
 * event. One still stamping (a Stop of some of its rows) goes on: it has more to stamp.
 * "Nothing left" is read off the run's counters (base + deltas not yet folded, as its
 * counts are read), each of the two statuses at zero: exact as of the statement's snapshot, as the triggers write them in
 * each cell write's own statement, and they count a cell a cancel scope covers as
 * cancelled. A walk of the cells for one not covered read every covered cell before it:
 * 1.7 s after a `where` Stop of 900,000 cells whose rows were first in the heap.
 */
export async function finishCancelledDispatches(
  db: Db,
  scope: { tableId: string; dispatchId?: string },
): Promise<string[]> {
  const { tableId, dispatchId } = scope;
  const only: SQL = dispatchId ? sql`and d.id = ${dispatchId}` : sql``;
  const rows = await queryRows<{ id: string }>(
    db,
    sql`with done as (
          update dispatches d set status = 'cancelled', finished_at = now(), updated_at = now()
           where d.table_id = ${tableId} and d.status = 'active' and not d.stamping ${only}
             and not exists (
               select 1 from (
                 select k.status, k.n from run_cell_counts k
                  where k.dispatch_id = d.id and k.status in ('queued', 'running')
                 union all
                 select x.status, x.n from cell_count_deltas x
                  where x.table_id = d.table_id and x.dispatch_id = d.id and x.group_id is not null
                    and x.status in ('queued', 'running')) c
                group by c.status having sum(c.n) <> 0)
          returning d.id, d.table_id
        ),
        ev as (
          insert into events (table_id, kind, data)
          select table_id, 'dispatch', jsonb_build_object('dispatchId', id, 'status', 'cancelled') from done
          returning table_id
        )
        select id, (select count(*) from ev) as events from done`,
  );
  return rows.map((r) => r.id);
}

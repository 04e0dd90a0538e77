import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";
import { coveredCell } from "../sql";

/**
 * After a Stop: active dispatches of the table (or the one named) that are done stamping
 * and have nothing queued or running left become `cancelled`, each with its `dispatch`
 * event. One still stamping (a Stop of some of its rows) goes on: it has more to stamp.
 */
export async function finishCancelledDispatches(
  db: Db,
  scope: { tableId: string; dispatchId?: string },
): Promise<string[]> {
  const { tableId, dispatchId } = scope;
  const only: SQL = dispatchId ? sql`and d.id = ${dispatchId}` : sql``;
  // `('queued', 'running')` written out: the window's partial index (db/schema/cells.ts)
  // names that set, and the planner matches it by its text.
  const rows = await queryRows<{ id: string }>(
    db,
    sql`with done as (
          update dispatches d set status = 'cancelled', finished_at = now(), updated_at = now()
           where d.table_id = ${tableId} and d.status = 'active' and not d.stamping ${only}
             and case
                   -- A large Stop's scope over the whole run covers every queued cell of it:
                   -- only a running one is left to look for, not a million covered ones.
                   when exists (select 1 from cancel_scopes s where s.dispatch_id = d.id and s.group_ids is null
                                   and s.row_ids is null and s.stop_seq is null)
                   then not exists (select 1 from cells c where c.dispatch_id = d.id and c.status = 'running')
                   -- A queued cell a scope covers is not in flight (it reads as cancelled).
                   else not exists (select 1 from cells c where c.dispatch_id = d.id and c.status in ('queued', 'running')
                                     and not (c.status = 'queued' and ${coveredCell("c")}))
                 end
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

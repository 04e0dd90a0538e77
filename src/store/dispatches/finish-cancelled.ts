import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";

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
             and not exists (select 1 from cells c where c.dispatch_id = d.id and c.status in ('queued', 'running'))
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

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { CellRef, TransitionOutcome } from "./transition";

/**
 * queued(e) → absent: the usage limit stopped the run before this cell started, so it goes
 * back to never-run (a later `new` run picks it up). Its removal is announced as a `cell`
 * event with status null.
 */
export async function unstampCell(
  db: Db,
  cell: CellRef & { executionId: string },
): Promise<TransitionOutcome> {
  const { rowId, groupId, executionId } = cell;
  const [row] = await queryRows<{ deleted: number; current: string | null }>(
    db,
    sql`with del as (
          delete from cells where row_id = ${rowId} and group_id = ${groupId}
             and status = 'queued' and execution_id = ${executionId}
          returning table_id, row_id, group_id, execution_id, attempt
        ),
        ev as (
          insert into events (table_id, kind, data)
          select table_id, 'cell', jsonb_build_object('rowId', row_id, 'groupId', group_id, 'status', null,
                                                      'executionId', execution_id, 'attempt', attempt)
            from del
          returning 1
        )
        select (select count(*) from del)::int as deleted, (select count(*) from ev)::int as events,
               (select status::text from cells where row_id = ${rowId} and group_id = ${groupId}) as current`,
  );
  if (row?.deleted === 1) return { ok: true };
  if (!row?.current) return { ok: false, reason: "gone" };
  return { ok: false, reason: row.current === "cancelled" ? "cancelled" : "stale" };
}

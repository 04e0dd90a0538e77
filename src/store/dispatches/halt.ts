/**
 * The credit halts (the workspace's month used up, or the run's own cap). Invariants:
 * the dispatch goes `halted` by one conditional UPDATE (active → halted), and only the
 * statement that made that change writes the `limit` event, so however many attempts hit
 * the limit at once there is exactly one; its queued cells go back to un-run (absent,
 * announced as `cell` events with status null) in the same transaction, read after the
 * halt took the run's row (so after any page of it being stamped), so no cell of it is
 * left queued; running cells finish on their own (they were admitted). The attempt
 * that hit the limit hands its own cell back too. The dispatch records which limit it was
 * (`halt_reason`); the event says it in `reason` (`credits` for the month, as before, or
 * `run_credit_cap`) and in `haltReason` (the run view's value).
 * Its events stay bounded by runs, not cells (as a Stop's): when it un-runs more than
 * CELL_EVENTS_UP_TO queued cells, the run's `halted` event carries their number
 * (`unstamped`) instead of a `cell` event each; the attempt's own cell keeps its event.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { CELL_EVENTS_UP_TO } from "@/contracts/events";
import type { HaltReason } from "@/domain/statuses";
import { coveredCell } from "../sql";

export const LIMIT_MESSAGE =
  "The workspace's monthly credits are used up; the run stopped. Cells it had not started are un-run.";

/** The cap is the dispatch's own, so the message is built in SQL from its row. */
// float8's text is the shortest that reads back: 5 credits show as 5, half a credit as 0.5.
const capMessage = sql`'The run reached its credit cap of ' || (dp.max_credits_milli::float8 / 1000)::text ||
  ' credits; it stopped. Cells it had not started are un-run.'`;

export async function haltForLimit(
  db: Db,
  at: {
    dispatchId: string | null;
    tableId: string;
    /** Which limit was hit; the monthly one when not said. */
    reason?: HaltReason;
    own: { rowId: string; groupId: string; executionId: string; attempt: number };
  },
): Promise<{ halted: boolean; unstamped: number }> {
  const reason: HaltReason = at.reason ?? "monthly_credits";
  const eventReason = reason === "run_credit_cap" ? "run_credit_cap" : "credits";
  const message = reason === "run_credit_cap" ? capMessage : sql`${LIMIT_MESSAGE}::text`;
  // Two statements in one transaction: the halt waits for a page of the run being stamped
  // (a page locks its run first), and the unstamp that follows reads with a snapshot taken
  // after it, so it sees that page's cells. In one statement the delete read the snapshot
  // from before the wait and left the page's cells queued in a halted run.
  const row = await db.transaction(async (tx) => {
    const halted = await queryRows<{ id: string; table_id: string; message: string }>(
      tx,
      sql`update dispatches dp set status = 'halted', halt_reason = ${reason}::halt_reason,
                 finished_at = now(), updated_at = now()
           where dp.id = ${at.dispatchId} and dp.status = 'active'
          returning dp.id, dp.table_id, ${message} as message`,
    );
    const [r] = await queryRows<{ unstamped: number }>(
      tx,
      sql`with d as (
            select * from jsonb_to_recordset(${JSON.stringify(halted)}::jsonb)
                       as x(id text, table_id text, message text)
          ),
          del as (
            delete from cells c
             where (c.dispatch_id in (select id from d) and c.status = 'queued' and not ${coveredCell("c")})
                or (c.row_id = ${at.own.rowId} and c.group_id = ${at.own.groupId}
                    and c.execution_id = ${at.own.executionId} and c.attempt = ${at.own.attempt}
                    and c.status = 'running')
            returning c.table_id, c.row_id, c.group_id, c.execution_id, c.attempt
          ),
          queued as (
            select count(*)::int as n from del
             where not (row_id = ${at.own.rowId} and group_id = ${at.own.groupId})
          ),
          ev as (
            insert into events (table_id, kind, data)
            select table_id, 'cell'::event_kind, jsonb_build_object('rowId', row_id, 'groupId', group_id, 'status', null,
                                                        'executionId', execution_id, 'attempt', attempt) from del
             where (row_id = ${at.own.rowId} and group_id = ${at.own.groupId})
                or (select n from queued) <= ${CELL_EVENTS_UP_TO}
            union all
            select table_id, 'limit'::event_kind, jsonb_build_object('dispatchId', id, 'reason', ${eventReason}::text,
                                                        'haltReason', ${reason}::text, 'message', message) from d
            union all
            select table_id, 'dispatch'::event_kind,
                   jsonb_build_object('dispatchId', id, 'status', 'halted')
                   || case when (select n from queued) > ${CELL_EVENTS_UP_TO}
                           then jsonb_build_object('unstamped', (select n from queued)) else '{}'::jsonb end
              from d
            returning table_id
          ),
          wake as (select pg_notify('cellflow_events', ${at.tableId}) where exists (select 1 from ev))
          select (select n from queued) as unstamped,
                 (select count(*) from wake)::int as woke`,
    );
    return { halted: halted.length, unstamped: r?.unstamped ?? 0 };
  });
  return { halted: row?.halted === 1, unstamped: row?.unstamped ?? 0 };
}

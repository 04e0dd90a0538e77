/**
 * An edit re-arms groups: their cells on the row are removed (in flight or finished; an
 * attempt still running finds its cell gone and stops) and their output columns are
 * cleared, with a `cell` event (status null) per removed cell, in one statement. A
 * removed cell that had started keeps its attempt in the cell's history, outputs read
 * from the row as the statement found it (before the clearing); one that ended keeps
 * its status, one still in flight is recorded as cancelled (the same record the history
 * trigger of migration 0025 writes for a replaced cell). The cells are locked in group
 * order before the row, as a Stop's cancel (group order) and a carrier's terminal write
 * (its cell, then the row) lock them, so the clear does not close a cycle with either.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { CellStatus } from "@/domain/statuses";
import { TERMINAL, textArray } from "../sql";

export async function clearGroupCells(
  db: Db,
  clear: { tableId: string; rowId: string; groupIds: string[]; clearColumns: string[] },
): Promise<{ executionId: string; was: CellStatus }[]> {
  const { tableId, rowId, groupIds, clearColumns } = clear;
  if (groupIds.length === 0) return [];
  return queryRows<{ executionId: string; was: CellStatus }>(
    db,
    sql`with target as (
          select group_id from cells
           where table_id = ${tableId} and row_id = ${rowId} and group_id = any(${textArray(groupIds)})
           order by group_id
           for update
        ),
        del as (
          delete from cells c using target t where c.row_id = ${rowId} and c.group_id = t.group_id
          returning c.table_id, c.row_id, c.group_id, c.execution_id, c.status, c.attempt, c.outcome, c.error,
                    c.started_at, c.finished_at, c.block_errors, c.details, c.resumed_from
        ),
        kept as (
          insert into cell_attempts (table_id, row_id, group_id, execution_id, attempt, status, outcome, error,
                                     started_at, ended_at, outputs, block_errors, details, resumed_from)
          select d.table_id, d.row_id, d.group_id, d.execution_id, d.attempt,
                 case when d.status in ${TERMINAL} then d.status else 'cancelled' end,
                 d.outcome,
                 case when d.status in ${TERMINAL} then d.error
                      else 'Cleared by an edit of its inputs before it finished' end,
                 d.started_at, coalesce(d.finished_at, now()),
                 case when d.status = 'completed' then cellflow_group_outputs(t.schema, r.data, d.group_id) end,
                 d.block_errors, d.details, d.resumed_from
            from del d join tables t on t.id = d.table_id join rows r on r.id = d.row_id
           where d.status in ${TERMINAL} or d.started_at is not null
          returning 1
        ),
        cleared as (
          -- reads del whole first (always true): the cells are locked before the row
          update rows set data = data - ${textArray(clearColumns)}, updated_at = now()
           where id = ${rowId} and table_id = ${tableId} and ${clearColumns.length > 0}
             and (select count(*) from del) >= 0
          returning id
        ),
        ev as (
          insert into events (table_id, kind, data)
          select table_id, 'cell', jsonb_build_object('rowId', row_id, 'groupId', group_id, 'status', null,
                                                      'executionId', execution_id, 'attempt', attempt,
                                                      'cleared', true)
            from del
          returning 1
        )
        select execution_id as "executionId", status as was,
               (select count(*) from ev) as events, (select count(*) from cleared) as rows,
               (select count(*) from kept) as kept
          from del`,
  );
}

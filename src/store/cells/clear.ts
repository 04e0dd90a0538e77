/**
 * An edit re-arms groups: their cells on the row are removed (in flight or finished; an
 * attempt still running finds its cell gone and stops) and their output columns are
 * cleared, with a `cell` event (status null) per removed cell, in one statement.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";
import type { CellStatus } from "../../domain/statuses";
import { textArray } from "../sql";

export async function clearGroupCells(
  db: Db,
  tableId: string,
  rowId: string,
  groupIds: string[],
  clearColumns: string[],
): Promise<{ executionId: string; was: CellStatus }[]> {
  if (groupIds.length === 0) return [];
  return queryRows<{ executionId: string; was: CellStatus }>(
    db,
    sql`with del as (
          delete from cells where row_id = ${rowId} and group_id = any(${textArray(groupIds)})
          returning table_id, row_id, group_id, execution_id, status
        ),
        cleared as (
          update rows set data = data - ${textArray(clearColumns)}, updated_at = now()
           where id = ${rowId} and table_id = ${tableId} and ${clearColumns.length > 0}
          returning id
        ),
        ev as (
          insert into events (table_id, kind, data)
          select table_id, 'cell', jsonb_build_object('rowId', row_id, 'groupId', group_id, 'status', null,
                                                      'executionId', execution_id, 'cleared', true)
            from del
          returning 1
        )
        select execution_id as "executionId", status as was,
               (select count(*) from ev) as events, (select count(*) from cleared) as rows
          from del`,
  );
}

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { retryOnConflict } from "@db/sqlstate";
import { sql } from "drizzle-orm";
import { appendEvent } from "../events/append";

/**
 * Deletes a row. Its cells go with it (foreign key cascade), so any attempt still running
 * for it finds no cell to write and stops as `gone`; the execution ids of those running
 * are returned so the caller can stop them at once. The table's `row_count` moves in the
 * same statement. The delete locks the row before its cells, a carrier's terminal write
 * its cell before the row: a deadlock between them rolls the delete back whole, and it
 * runs again (never answered with an error).
 */
export async function deleteRow(
  db: Db,
  row: { tableId: string; rowId: string },
): Promise<{ running: string[] } | null> {
  const { tableId, rowId } = row;
  return retryOnConflict(() =>
    db.transaction(async (tx) => {
      const [row] = await queryRows<{ id: string; running: string[] }>(
        tx,
        sql`with doomed as (
            select c.execution_id from cells c where c.row_id = ${rowId} and c.status = 'running'
          ),
          del as (delete from rows where table_id = ${tableId} and id = ${rowId} returning id),
          counted as (
            update tables set row_count = row_count - (select count(*) from del)
             where id = ${tableId} and exists (select 1 from del)
          )
          select id, coalesce((select array_agg(execution_id) from doomed), '{}') as running from del`,
      );
      if (!row) return null;
      await appendEvent(tx, tableId, "rows", { op: "delete", rowIds: [rowId] });
      return { running: row.running };
    }),
  );
}

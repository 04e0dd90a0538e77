import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { retryOnConflict } from "@db/sqlstate";
import { type SQL, sql } from "drizzle-orm";
import type { TypedCondition } from "@/domain/where";
import { appendEvent } from "../events/append";
import { textArray } from "../sql";
import { rowsEventOf } from "./rows-event";
import { whereSql } from "./where-sql";

/** Which rows of the table a batch may take: these ids, or those matching the conditions. */
export type RowPick = { rowIds: readonly string[] } | { where: readonly TypedCondition[] };

/**
 * Deletes up to `limit` rows of the table that `pick` names, in one transaction, as the
 * single-row delete (./delete.ts) does each: their cells go with them (foreign key
 * cascade), so an attempt still running finds no cell to write and stops as `gone`, and
 * the execution ids of those running are returned for the caller to stop at once; the
 * table's `row_count` moves by what this very statement deleted; one `rows` event names
 * them, or counts them past ROW_EVENT_IDS_UP_TO (`rows-event.ts`). A deadlock with a
 * carrier's terminal write (cell before row, here row before cell) rolls the batch back
 * whole, and it runs again.
 */
export async function deleteRowBatch(
  db: Db,
  batch: { tableId: string; pick: RowPick; limit: number },
): Promise<{ rowIds: string[]; running: string[] }> {
  const { tableId, pick, limit } = batch;
  return retryOnConflict(() =>
    db.transaction(async (tx) => {
      const [out] = await queryRows<{ rowIds: string[]; running: string[] }>(
        tx,
        sql`with picked as (
            select r.id from rows r where r.table_id = ${tableId} and ${pickSql(pick)}
             order by r.position limit ${limit}
          ),
          doomed as (
            select c.execution_id from cells c join picked p on p.id = c.row_id where c.status = 'running'
          ),
          del as (delete from rows where table_id = ${tableId} and id in (select id from picked) returning id),
          counted as (
            update tables set row_count = row_count - (select count(*) from del)
             where id = ${tableId} and exists (select 1 from del)
          )
          select coalesce((select array_agg(id) from del), '{}') as "rowIds",
                 coalesce((select array_agg(execution_id) from doomed), '{}') as running`,
      );
      const rowIds = out?.rowIds ?? [];
      if (rowIds.length > 0) await appendEvent(tx, tableId, "rows", rowsEventOf("delete", rowIds));
      return { rowIds, running: out?.running ?? [] };
    }),
  );
}

function pickSql(pick: RowPick): SQL {
  if ("rowIds" in pick) return sql`r.id = any(${textArray(pick.rowIds)})`;
  return whereSql(pick.where);
}

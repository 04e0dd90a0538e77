/**
 * Drops the row indexes nothing can use any more: their table was deleted, or it has no
 * column of that id and type now (deleted, or its type changed; a rename keeps the id).
 * Invariants: the row that names an index is deleted only after the index is dropped, so
 * a sweep that dies halfway leaves the row for the next one, never an unnamed index; it
 * runs only in the row-index maintainer (services/row-indexes.ts), so no build of an
 * index it retires is under way meanwhile (a drop concurrent with a build on `rows` would
 * wait on it, and the build's claim would otherwise outlive the row the sweep deleted).
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { dropRowIndex } from "./build";

export async function sweepRowIndexes(db: Db, tableId?: string): Promise<number> {
  const retired = await queryRows<{ name: string }>(
    db,
    sql`select ri.index_name as name from row_indexes ri
          left join tables t on t.id = ri.table_id
         where ${tableId === undefined ? sql`true` : sql`ri.table_id = ${tableId}`}
           and (t.id is null or not exists (
                  select 1 from jsonb_array_elements(t.schema -> 'columns') c
                   where c ->> 'id' = ri.column_id and c ->> 'type' = ri.column_type))`,
  );
  for (const r of retired) {
    await dropRowIndex(db, r.name);
    await db.execute(sql`delete from row_indexes where index_name = ${r.name}`);
  }
  return retired.length;
}

/** Whether a table has any row index (its schema edits and deletion then start a sweep). */
export async function hasRowIndexes(db: Db, tableId: string): Promise<boolean> {
  const rows = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from row_indexes where table_id = ${tableId}`,
  );
  return (rows[0]?.n ?? 0) > 0;
}

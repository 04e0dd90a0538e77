/**
 * One page of a table's rows that match a `where`, in an order, after a cursor: the
 * filter, the order and the keyset condition are one SQL statement (nothing is filtered
 * or sorted in Node). The page's row ids are chosen first and only those rows are then
 * read whole (with their cells), so the per-row cell read never runs on rows the page
 * leaves out. Each row comes with its sort key in the cursor's form, for the next cursor.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";
import type { RowView } from "../../contracts/rows";
import type { RowCursor, RowOrder, SortKey } from "../../domain/row-order";
import type { TypedCondition } from "../../domain/where";
import { afterSql, cursorKeySql, orderSql, sortKeySql } from "./order-sql";
import { rowSelect } from "./read";
import { whereSql } from "./where-sql";

export interface FindRows {
  where: readonly TypedCondition[];
  order: RowOrder;
  after: RowCursor | null;
  limit: number;
}

export async function findRows(
  db: Db,
  tableId: string,
  find: FindRows,
): Promise<{ row: RowView; key: SortKey }[]> {
  const { order } = find;
  const key = order.column ? sortKeySql(order.column.id, order.column.type) : null;
  const pageKey = sql`page.sort_key`;
  const keyOut = order.column ? cursorKeySql(pageKey, order.column.type) : sql`null`;
  const found = await queryRows<RowView & { sortKey: SortKey }>(
    db,
    sql`select ${rowSelect}, ${keyOut} as "sortKey"
          from (select r.id, r.position, ${key ?? sql`null`} as sort_key
                  from rows r
                 where r.table_id = ${tableId}
                   and ${whereSql(find.where)}
                   and ${afterSql(order, find.after)}
                 order by ${orderSql(order, key, sql`r.position`)}
                 limit ${find.limit}) page
          join rows r on r.id = page.id
         order by ${orderSql(order, key && pageKey, sql`page.position`)}`,
  );
  return found.map(({ sortKey, ...row }) => ({ row, key: sortKey }));
}

/**
 * One page of a table's rows that match a `where`, in an order, after a cursor: the
 * filter, the order and the keyset condition are one SQL statement (nothing is filtered
 * or sorted in Node). The page's row ids are chosen first and only those rows are then
 * read whole (with their cells), so the per-row cell read never runs on rows the page
 * leaves out. Each row comes with its sort key in the cursor's form, for the next cursor.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";
import type { RowView } from "@/contracts/rows";
import type { RowCursor, RowOrder, SortKey } from "@/domain/row-order";
import type { TypedCondition } from "@/domain/where";
import { afterSql, beforeSql, cursorKeySql, orderSql, sortKeySql } from "./order-sql";
import { rowSelect } from "./read";
import { whereSql } from "./where-sql";

export interface FindRows {
  where: readonly TypedCondition[];
  order: RowOrder;
  /** The place the page starts after (or, `backward`, ends before); null: the start (end). */
  after: RowCursor | null;
  limit: number;
  /**
   * Read the order backwards from `after` (null: from the last row): the page is the
   * `limit` rows just before it, still returned in the order.
   */
  backward?: boolean;
  /**
   * Land at a fraction of the rows instead of a cursor: in position order at the position
   * that far between the first and the last (two index probes); in a column's order at
   * `rank` (an offset over the sorted keys: the only way into the middle of a sort).
   */
  seek?: { fraction: number; rank: number };
}

/**
 * The statement `findRows` runs (the benchmark explains it). In position order the page
 * comes straight off the (table, position) index. In a column's order every row of the
 * table is sorted anyway, so its key is computed once per row (`offset 0` keeps Postgres
 * from copying the expression into the keyset condition and the sort, which tripled the
 * cost of a date key), and the top of the rest is kept.
 */
export function findRowsSql(tableId: string, find: FindRows): SQL {
  const { order, after } = find;
  // Written into the statement, not bound: statements are planned generically (the pool's
  // plan_cache_mode), and a bound limit is guessed at 10 % of the table, which read the
  // page's rows back by hashing every row of the rows table.
  if (!Number.isSafeInteger(find.limit) || find.limit < 1) throw new Error("a page limit");
  const limit = sql.raw(String(find.limit));
  const rowsOfTable = sql`rows r where r.table_id = ${tableId} and ${whereSql(find.where)}`;
  const backward = find.backward === true;
  // Backwards: the reversed order, rows before the cursor; the outer select restores it.
  const scanOrder = backward ? reversed(order) : order;
  const from = (key: SQL | null, position: SQL) =>
    backward ? beforeSql(order, after, key, position) : afterSql(order, after, key, position);
  let ids: SQL;
  if (order.column === null) {
    const position = sql`r.position`;
    const start = find.seek
      ? seekPositionSql(tableId, order, find.seek.fraction)
      : from(null, position);
    ids = sql`select r.id, r.position, null as sort_key from ${rowsOfTable}
                and ${start}
              order by ${orderSql(scanOrder, null, position)} limit ${limit}`;
  } else {
    const key = sql`k.sort_key`;
    const position = sql`k.position`;
    const skip = find.seek
      ? sql` offset ${sql.raw(String(Math.max(0, Math.floor(find.seek.rank))))}`
      : sql``;
    ids = sql`select k.id, k.position, k.sort_key
                from (select r.id, r.position, ${sortKeySql(order.column.id, order.column.type)} as sort_key
                        from ${rowsOfTable} offset 0) k
               where ${find.seek ? sql`true` : from(key, position)}
               order by ${orderSql(scanOrder, key, position)} limit ${limit}${skip}`;
  }
  const pageKey = order.column ? sql`page.sort_key` : null;
  const keyOut = order.column && pageKey ? cursorKeySql(pageKey, order.column.type) : sql`null`;
  return sql`select ${rowSelect}, ${keyOut} as "sortKey"
               from (${ids}) page join rows r on r.id = page.id
              order by ${orderSql(order, pageKey, sql`page.position`)}`;
}

/** The same rows in the opposite order (`orderSql` reads a reversed order as such). */
function reversed(order: RowOrder): RowOrder & { reversed: boolean } {
  return { ...order, reversed: true };
}

/** Rows at or after `fraction` of the way from the table's first position to its last. */
function seekPositionSql(tableId: string, order: RowOrder, fraction: number): SQL {
  const f = sql.raw(String(fraction));
  const ends = sql`(select min(position) as lo, max(position) as hi from rows where table_id = ${tableId})`;
  return order.dir === "desc"
    ? sql`r.position <= (select hi - floor((hi - lo) * ${f}) from ${ends} e)`
    : sql`r.position >= (select lo + floor((hi - lo) * ${f}) from ${ends} e)`;
}

export async function findRows(
  db: Db,
  tableId: string,
  find: FindRows,
): Promise<{ row: RowView; key: SortKey }[]> {
  const found = await queryRows<RowView & { sortKey: SortKey }>(db, findRowsSql(tableId, find));
  return found.map(({ sortKey, ...row }) => ({ row, key: sortKey }));
}

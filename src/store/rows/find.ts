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
import { isSafeName, literal, sortKeyText } from "../row-indexes/keys";
import { afterSql, beforeSql, cursorKeySql, orderSql, sortKeySql, typedKey } from "./order-sql";
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
  /**
   * The order's row index is ready (store/row-indexes): the page is read off it, in the
   * index's order, instead of sorting every row of the table.
   */
  indexedOrder?: boolean;
}

/**
 * The statement `findRows` runs (the benchmark explains it). In position order the page
 * comes straight off the (table, position) index. In a column's order whose row index is
 * ready (`indexedOrder`), the page is read off that index in its order (`indexedIdsSql`).
 * Otherwise every row of the table is sorted, so its key is computed once per row
 * (`offset 0` keeps Postgres from copying the expression into the keyset condition and the
 * sort, which tripled the cost of a date key), and the top of the rest is kept.
 */
export function findRowsSql(tableId: string, find: FindRows): SQL {
  const { order, after } = find;
  // Written into the statement, not bound: statements are planned generically (the pool's
  // plan_cache_mode), and a bound limit is guessed at 10 % of the table, which read the
  // page's rows back by hashing every row of the rows table.
  if (!Number.isSafeInteger(find.limit) || find.limit < 1) throw new Error("a page limit");
  const limit = sql.raw(String(find.limit));
  // The table id and the filter written as literals and index expressions, so the
  // table's partial row indexes (store/row-indexes) can serve them.
  const rowsOfTable = sql`rows r where r.table_id = ${tableIdSql(tableId)} and ${whereSql(find.where, { indexable: true })}`;
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
  } else if (
    find.indexedOrder === true &&
    sortKeyText(order.column.id, order.column.type, "r.data")
  ) {
    ids = indexedIdsSql(rowsOfTable, find, order.column, scanOrder, limit);
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

/** The table id as a literal where it is safe to write one (generated ids are), else bound. */
export function tableIdSql(tableId: string): SQL {
  return isSafeName(tableId) ? sql.raw(literal(tableId)) : sql`${tableId}`;
}

/**
 * The page's ids off the order's index (`(key dir nulls last, position asc)`, read
 * backwards for a backward page). Rows after the cursor are at most two ranges of the
 * index — the keys past the cursor's, and the null keys — each read in the index's order
 * up to the limit, so neither the OR of `afterSql` nor a sort of the table is needed.
 */
function indexedIdsSql(
  rowsOfTable: SQL,
  find: FindRows,
  column: NonNullable<RowOrder["column"]>,
  scanOrder: RowOrder & { reversed?: boolean },
  limit: SQL,
): SQL {
  const { order, after } = find;
  const k = sql.raw(sortKeyText(column.id, column.type, "r.data") ?? "null");
  const backward = scanOrder.reversed === true;
  const keyUp = (order.dir === "desc") === backward;
  const nullsFirst = backward;
  const p = sql`r.position`;
  const branch = (cond: SQL, skip: SQL = sql``) =>
    sql`(select r.id, r.position, ${k} as sort_key from ${rowsOfTable} and ${cond}
          order by ${orderSql(scanOrder, k, p)} limit ${limit}${skip})`;
  const branches: SQL[] = [];
  if (find.seek)
    branches.push(
      branch(sql`true`, sql` offset ${sql.raw(String(Math.max(0, Math.floor(find.seek.rank))))}`),
    );
  else if (after === null) branches.push(branch(sql`true`));
  else {
    const pos = sql`${after.position}::bigint`;
    const posBeyond = backward ? sql`${p} < ${pos}` : sql`${p} > ${pos}`;
    if (after.key === null) {
      branches.push(branch(sql`${k} is null and ${posBeyond}`));
      if (nullsFirst) branches.push(branch(sql`${k} is not null`));
    } else {
      const at = typedKey(after.key, column.type);
      const [from, past] = keyUp ? [sql`>=`, sql`>`] : [sql`<=`, sql`<`];
      branches.push(branch(sql`${k} ${from} ${at} and (${k} ${past} ${at} or ${posBeyond})`));
      if (!nullsFirst) branches.push(branch(sql`${k} is null`));
    }
  }
  return sql`select k.id, k.position, k.sort_key from (${sql.join(branches, sql` union all `)}) k
              order by ${orderSql(scanOrder, sql`k.sort_key`, sql`k.position`)} limit ${limit}`;
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

/**
 * How many of a table's rows match a `where`: with no condition the table's maintained
 * `row_count` (moved in the statements that insert and delete rows, so no scan), else
 * one count over the table's rows with the same compiled filter `findRows` pages through.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { TypedCondition } from "@/domain/where";
import { tableIdSql } from "./find";
import { whereSql } from "./where-sql";

export async function countRows(
  db: Db,
  tableId: string,
  where: readonly TypedCondition[],
): Promise<number> {
  const counted = await queryRows<{ n: number }>(
    db,
    where.length === 0
      ? sql`select row_count::int as n from tables where id = ${tableId}`
      : sql`select count(*)::int as n from rows r
             where r.table_id = ${tableIdSql(tableId)} and ${whereSql(where, { indexable: true })}`,
  );
  return counted[0]?.n ?? 0;
}

/**
 * How rows sort under `orderBy` (domain/row-order.ts), as SQL over a row aliased `r`.
 * Invariants: each column type sorts by one typed expression that yields null, never an
 * error, for an empty value or a value of another type (a text a workflow wrote into a
 * number column): numbers numerically, dates as instants, text and select values as text
 * ignoring case (their first SORT_TEXT_LENGTH characters), booleans false before true,
 * JSON by its text; null keys sort last in both directions; ties go by position,
 * ascending, so the order is total and `afterSql` starts exactly after the cursor's row.
 * `orderSql` and `afterSql` take the key and position as expressions, so a statement can
 * compute the key once per row and refer to it.
 */
import { type SQL, sql } from "drizzle-orm";
import type { ColumnType } from "@/contracts/table";
import { type RowCursor, type RowOrder, SORT_TEXT_LENGTH } from "@/domain/row-order";
import { assertNever } from "@/domain/statuses";

/** The typed sort key of a column (numeric, timestamptz, text or boolean; null sorts last). */
export function sortKeySql(column: string, type: ColumnType): SQL {
  const v = sql`(r.data -> ${column}::text)`;
  switch (type) {
    case "number":
      return sql`(case when jsonb_typeof(${v}) = 'number' then ${v}::numeric end)`;
    case "date":
      return sql`cellflow_timestamp(r.data ->> ${column}::text)`;
    case "text":
    case "select":
      return sql`lower(left(nullif(case when jsonb_typeof(${v}) = 'string' then ${v} #>> '{}' end, ''), ${SORT_TEXT_LENGTH}::int))`;
    case "boolean":
      return sql`(case when jsonb_typeof(${v}) = 'boolean' then ${v}::boolean end)`;
    case "json":
      // Empty as the `empty` condition means it (null, "", [], {}): sorts last.
      return sql`left(case when coalesce(${v}, 'null'::jsonb) in ('null'::jsonb, '""'::jsonb, '[]'::jsonb, '{}'::jsonb) then null else ${v}::text end, ${SORT_TEXT_LENGTH}::int)`;
    default:
      return assertNever(type);
  }
}

/** The key as the cursor carries it (see SortKey), from the typed key `key`. */
export function cursorKeySql(key: SQL, type: ColumnType): SQL {
  switch (type) {
    case "number":
      return sql`${key}::text`;
    case "date":
      return sql`to_char(${key} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
    case "text":
    case "select":
    case "json":
    case "boolean":
      return key;
    default:
      return assertNever(type);
  }
}

/** A cursor's key back as a typed value; the shapes were checked by decodeRowCursor. */
export function typedKey(key: string | boolean, type: ColumnType): SQL {
  switch (type) {
    case "number":
      return sql`${String(key)}::numeric`;
    case "date":
      // Null (never an error) for an impossible date a tampered cursor might hold. A
      // subquery, so it runs once: statements are planned generically (the pool's
      // plan_cache_mode), where the call on a parameter would run for every row.
      return sql`(select cellflow_timestamp(${String(key)}::text))`;
    case "text":
    case "select":
    case "json":
      return sql`${String(key)}::text`;
    case "boolean":
      return sql`${key === true}::boolean`;
    default:
      return assertNever(type);
  }
}

/**
 * `order by` for `order`, given a row's typed key (null: position order) and position;
 * `reversed`: exactly the opposite order (null keys first, ties by position descending).
 */
export function orderSql(
  order: RowOrder & { reversed?: boolean },
  key: SQL | null,
  position: SQL,
): SQL {
  const back = order.reversed === true;
  const dir = (order.dir === "desc") !== back ? sql`desc` : sql`asc`;
  if (key === null) return sql`${position} ${dir}`;
  return back
    ? sql`${key} ${dir} nulls first, ${position} desc`
    : sql`${key} ${dir} nulls last, ${position} asc`;
}

/** Rows strictly before `cursor` in `order` (null cursor: every row), as `afterSql` mirrors. */
export function beforeSql(
  order: RowOrder,
  cursor: RowCursor | null,
  key: SQL | null,
  position: SQL,
): SQL {
  if (cursor === null) return sql`true`;
  const p = sql`${cursor.position}::bigint`;
  if (order.column === null || key === null)
    return order.dir === "desc" ? sql`${position} > ${p}` : sql`${position} < ${p}`;
  if (cursor.key === null) return sql`(${key} is not null or ${position} < ${p})`;
  const at = typedKey(cursor.key, order.column.type);
  const ahead = order.dir === "desc" ? sql`${key} > ${at}` : sql`${key} < ${at}`;
  return sql`(${ahead} or (${key} = ${at} and ${position} < ${p}))`;
}

/** Rows strictly after `cursor` in `order`, given a row's typed key and position. */
export function afterSql(
  order: RowOrder,
  cursor: RowCursor | null,
  key: SQL | null,
  position: SQL,
): SQL {
  if (cursor === null) return sql`true`;
  const p = sql`${cursor.position}::bigint`;
  if (order.column === null || key === null)
    return order.dir === "desc" ? sql`${position} < ${p}` : sql`${position} > ${p}`;
  if (cursor.key === null) return sql`(${key} is null and ${position} > ${p})`;
  const at = typedKey(cursor.key, order.column.type);
  const beyond = order.dir === "desc" ? sql`${key} < ${at}` : sql`${key} > ${at}`;
  return sql`(${beyond} or (${key} = ${at} and ${position} > ${p}) or ${key} is null)`;
}

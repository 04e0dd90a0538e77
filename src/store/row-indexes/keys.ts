/**
 * The expressions the row indexes are built on and the reads that use them, written once
 * as SQL text with every name inlined. Invariant: a read that should use an index writes
 * exactly the expression and the `table_id = '<id>'` predicate the index was built with,
 * as literals: statements are planned generically (the pool's plan_cache_mode), and
 * Postgres matches neither an index expression nor a partial index's predicate against a
 * bound parameter. The sort keys are those of store/rows/order-sql.ts (`sortKeySql`); a
 * test compares the two on every indexable type.
 */
import type { ColumnType } from "@/contracts/table";
import { SORT_TEXT_LENGTH } from "@/domain/row-order";
import type { RowIndexKind } from "@/domain/statuses";
import type { TypedCondition } from "@/domain/where";

/** The most indexes (pending, building or ready) one table holds at once. */
export const ROW_INDEXES_PER_TABLE = 5;

/** Ids written into statements: generated table ids and column ids (ClientId) fit. */
const SAFE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function isSafeName(name: string): boolean {
  return SAFE_NAME.test(name);
}

/** A SQL string literal of a name `isSafeName` accepted (it holds no quote). */
export function literal(name: string): string {
  if (!isSafeName(name)) throw new Error(`not a name to write into SQL: ${name}`);
  return `'${name}'`;
}

/** The column types whose sort key an index can hold (booleans and JSON are not worth one). */
export function sortIndexable(type: ColumnType): boolean {
  return type === "number" || type === "date" || type === "text" || type === "select";
}

/**
 * A column's typed sort key over the row value `data` (`r.data` in reads, `data` in the
 * index), the same expression as `sortKeySql` with its names and length inlined.
 */
export function sortKeyText(column: string, type: ColumnType, data: string): string | null {
  const v = `(${data} -> ${literal(column)}::text)`;
  switch (type) {
    case "number":
      return `(case when jsonb_typeof(${v}) = 'number' then ${v}::numeric end)`;
    case "date":
      return `cellflow_timestamp(${data} ->> ${literal(column)}::text)`;
    case "text":
    case "select":
      return `lower(left(nullif(case when jsonb_typeof(${v}) = 'string' then ${v} #>> '{}' end, ''), ${SORT_TEXT_LENGTH}::int))`;
    default:
      return null;
  }
}

/** The lowered text a trigram index holds and `contains` matches with LIKE. */
export function trgmText(column: string, data: string): string {
  return `lower(${data} ->> ${literal(column)}::text)`;
}

/** The index a read's order wants (null: none serves it). */
export function orderWants(
  column: { id: string; type: ColumnType } | null,
  dir: "asc" | "desc",
): RowIndexWant | null {
  if (!column || !sortIndexable(column.type) || !isSafeName(column.id)) return null;
  return {
    columnId: column.id,
    columnType: column.type,
    kind: dir === "desc" ? "sort_desc" : "sort_asc",
  };
}

/** The indexes a read's filter wants: a range or equality on a number or a date, `contains` on a text. */
export function whereWants(conditions: readonly TypedCondition[]): RowIndexWant[] {
  const wants: RowIndexWant[] = [];
  for (const c of conditions) {
    if (!("column" in c) || !isSafeName(c.column)) continue;
    const range = ["eq", "gt", "gte", "lt", "lte"].includes(c.op);
    if (range && (c.type === "number" || c.type === "date"))
      wants.push({ columnId: c.column, columnType: c.type, kind: "sort_asc" });
    else if (c.op === "contains" && c.type === "text")
      wants.push({ columnId: c.column, columnType: c.type, kind: "trgm" });
  }
  return wants;
}

export interface RowIndexWant {
  columnId: string;
  columnType: ColumnType;
  kind: RowIndexKind;
}

/** The `CREATE INDEX CONCURRENTLY` of one index (every name checked and inlined). */
export function createIndexSql(name: string, tableId: string, want: RowIndexWant): string {
  if (!/^rix_[a-f0-9]{24}$/.test(name)) throw new Error(`not a row index name: ${name}`);
  const where = `where table_id = ${literal(tableId)}`;
  if (want.kind === "trgm")
    return `create index concurrently if not exists ${name} on rows using gin (${trgmText(want.columnId, "data")} gin_trgm_ops) ${where}`;
  const key = sortKeyText(want.columnId, want.columnType, "data");
  if (key === null) throw new Error(`no sort key for a ${want.columnType} column`);
  const dir = want.kind === "sort_desc" ? "desc" : "asc";
  return `create index concurrently if not exists ${name} on rows (${key} ${dir} nulls last, position asc) ${where}`;
}

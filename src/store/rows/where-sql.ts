/**
 * Compiles checked row filters (domain/where.ts) to one SQL condition over a row aliased
 * `r` (its `id` and `data`). Invariants: every value is a bound parameter; no condition
 * can raise an error on a stored value of another type (a text in a number column, a
 * malformed date): such a value simply does not match; `neq` matches empty values too
 * (a row whose value is absent is not equal to anything). Evaluated by Postgres inside
 * the statement that uses it: nothing is evaluated per row in Node.
 */
import { type SQL, sql } from "drizzle-orm";
import type { ColumnType } from "@/contracts/table";
import type { WhereOp } from "@/contracts/where";
import { assertNever } from "@/domain/statuses";
import type { TypedCondition } from "@/domain/where";
import { isSafeName, sortKeyText, trgmText } from "../row-indexes/keys";
import { effectiveStatus } from "../sql";

/**
 * All conditions (true for an empty list). `indexable`: the conditions a row index serves
 * (store/row-indexes/keys.ts) are written as its expression, names inlined, and without
 * the `coalesce(…, false)` that no index matches — the same rows, only where the result
 * is the whole condition of a WHERE (a null there leaves the row out as false does).
 */
export function whereSql(
  conditions: readonly TypedCondition[],
  opts: { indexable?: boolean } = {},
): SQL {
  if (conditions.length === 0) return sql`true`;
  const each = (c: TypedCondition) => (opts.indexable ? indexableSql(c) : null) ?? conditionSql(c);
  return sql`(${sql.join(conditions.map(each), sql` and `)})`;
}

const INDEX_CMP: Partial<Record<WhereOp, string>> = {
  eq: "=",
  gt: ">",
  gte: ">=",
  lt: "<",
  lte: "<=",
};

/** A condition as a row index's expression, or null where none serves it. */
function indexableSql(cond: TypedCondition): SQL | null {
  if (!("column" in cond) || !isSafeName(cond.column)) return null;
  const cmp = INDEX_CMP[cond.op];
  if (cmp && (cond.type === "number" || cond.type === "date")) {
    const key = sql.raw(sortKeyText(cond.column, cond.type, "r.data") ?? "null");
    const value =
      cond.type === "number"
        ? sql`${Number(cond.value)}::numeric`
        : sql`cellflow_timestamp(${String(cond.value)}::text)`;
    return sql`${key} ${sql.raw(cmp)} ${value}`;
  }
  if (cond.op === "contains" && cond.type === "text") {
    // The substring as a LIKE pattern (its own %, _ and \ escaped), which a trigram index serves.
    const v = sql.raw(`(r.data -> '${cond.column}'::text)`);
    const lowered = sql.raw(trgmText(cond.column, "r.data"));
    return sql`(jsonb_typeof(${v}) = 'string' and ${lowered} like
                '%' || replace(replace(replace(lower(${String(cond.value)}::text), '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%')`;
  }
  return null;
}

function conditionSql(cond: TypedCondition): SQL {
  if ("outcome" in cond)
    return sql`exists (select 1 from cells wc where wc.row_id = r.id and wc.group_id = ${cond.group}
                          and wc.status = 'completed' and wc.outcome = ${cond.outcome})`;
  if ("group" in cond) {
    return cond.status === null
      ? sql`not exists (select 1 from cells wc where wc.row_id = r.id and wc.group_id = ${cond.group})`
      : sql`exists (select 1 from cells wc where wc.row_id = r.id and wc.group_id = ${cond.group}
                       and ${effectiveStatus("wc")} = ${cond.status})`;
  }
  return columnSql(cond.column, cond.type, cond.op, cond.value);
}

/** The stored value compares with the given one: one definition per type. */
function compare(column: string, type: ColumnType, cmp: SQL, value: unknown): SQL {
  const v = sql`(r.data -> ${column}::text)`;
  if (type === "date")
    return sql`cellflow_timestamp(r.data ->> ${column}::text) ${cmp} cellflow_timestamp(${String(value)}::text)`;
  if (type === "number")
    return sql`(case when jsonb_typeof(${v}) = 'number' then ${v}::numeric end) ${cmp} ${Number(value)}::numeric`;
  return sql`${v} ${cmp} ${JSON.stringify(value)}::jsonb`;
}

function columnSql(column: string, type: ColumnType, op: WhereOp, value: unknown): SQL {
  const v = sql`(r.data -> ${column}::text)`;
  const empty = sql`coalesce(${v}, 'null'::jsonb) in ('null'::jsonb, '""'::jsonb, '[]'::jsonb, '{}'::jsonb)`;
  switch (op) {
    case "eq":
      return sql`coalesce(${compare(column, type, sql`=`, value)}, false)`;
    case "neq":
      return sql`not coalesce(${compare(column, type, sql`=`, value)}, false)`;
    case "gt":
      return sql`coalesce(${compare(column, type, sql`>`, value)}, false)`;
    case "gte":
      return sql`coalesce(${compare(column, type, sql`>=`, value)}, false)`;
    case "lt":
      return sql`coalesce(${compare(column, type, sql`<`, value)}, false)`;
    case "lte":
      return sql`coalesce(${compare(column, type, sql`<=`, value)}, false)`;
    case "contains":
      // Text: a case-insensitive substring. JSON: an array with an element equal to (or,
      // for objects, containing) the value.
      return type === "json"
        ? sql`coalesce(jsonb_typeof(${v}) = 'array' and ${v} @> jsonb_build_array(${JSON.stringify(value)}::jsonb), false)`
        : sql`coalesce(jsonb_typeof(${v}) = 'string' and strpos(lower(${v} #>> '{}'), lower(${String(value)}::text)) > 0, false)`;
    case "empty":
      return empty;
    case "not_empty":
      return sql`not ${empty}`;
    default:
      return assertNever(op);
  }
}

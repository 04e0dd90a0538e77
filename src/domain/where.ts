/**
 * Row filters (`where`) against a table's schema. Invariant: a condition that reaches
 * the database names a column or group the table has, with an operator that fits the
 * column's type and a value of that type, so compiling it to SQL (store/rows/where-sql.ts)
 * can never fail on a row; the column's type travels with it, so a run's background
 * pages compile it the same way without reading the schema again.
 */
import type { Issue } from "@/contracts/common";
import type { ColumnType, TableSchema } from "@/contracts/table";
import { WHERE_OPS, type Where, type WhereOp } from "@/contracts/where";
import { type Failure, invalid } from "./errors";
import type { Result } from "./result";
import type { CellOutcome, CellStatus } from "./statuses";
import { assertNever } from "./statuses";
import { checkValue } from "./values";

export type TypedCondition =
  | { column: string; type: ColumnType; op: WhereOp; value?: unknown }
  | { group: string; status: CellStatus | null }
  | { group: string; outcome: CellOutcome };

/** Every operator, in the vocabulary's order: for callers that check one before its column is known. */
export { WHERE_OPS };

/** The column types each operator applies to. */
function fits(op: WhereOp, type: ColumnType): boolean {
  switch (op) {
    case "eq":
    case "neq":
    case "empty":
    case "not_empty":
      return true;
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return type === "number" || type === "date";
    case "contains":
      return type === "text" || type === "json";
    default:
      return assertNever(op);
  }
}

/** The operators a column of `type` takes, in the vocabulary's order (the grid offers these). */
export function opsFor(type: ColumnType): WhereOp[] {
  return WHERE_OPS.filter((op) => fits(op, type));
}

/** A condition as sent (`Where`), or a group's run condition, whose value is `unknown`. */
type ConditionInput = Where[number] | { column: string; op: WhereOp; value?: unknown };

export function checkWhere(
  schema: TableSchema,
  where: readonly ConditionInput[],
  path = "where",
): Result<TypedCondition[], Failure> {
  const columns = new Map(schema.columns.map((c) => [c.id, c]));
  const groups = new Set(schema.groups.map((g) => g.id));
  const issues: Issue[] = [];
  const typed: TypedCondition[] = [];
  where.forEach((cond, i) => {
    const at = `${path}.${i}`;
    if ("group" in cond) {
      if (!groups.has(cond.group))
        issues.push({ path: `${at}.group`, message: `unknown group "${cond.group}"` });
      else if ("outcome" in cond) typed.push({ group: cond.group, outcome: cond.outcome });
      else typed.push({ group: cond.group, status: cond.status });
      return;
    }
    const column = columns.get(cond.column);
    if (!column) {
      issues.push({ path: `${at}.column`, message: `unknown column "${cond.column}"` });
      return;
    }
    if (!fits(cond.op, column.type)) {
      issues.push({
        path: `${at}.op`,
        message: `"${cond.op}" does not apply to ${column.name} (a ${column.type} column)`,
      });
      return;
    }
    const problem = valueProblem(cond.op, column, cond.value);
    if (problem) {
      issues.push({ path: `${at}.value`, message: `${column.name}: ${problem}` });
      return;
    }
    typed.push({
      column: column.id,
      type: column.type,
      op: cond.op,
      ...(cond.value === undefined ? {} : { value: cond.value }),
    });
  });
  return issues.length > 0
    ? { ok: false, reason: invalid(issues, "The where conditions are not valid") }
    : { ok: true, value: typed };
}

function valueProblem(
  op: WhereOp,
  column: TableSchema["columns"][number],
  value: unknown,
): string | null {
  if (op === "empty" || op === "not_empty")
    return value === undefined ? null : `"${op}" takes no value`;
  if (value === undefined || value === null)
    return `"${op}" needs a value (use "empty" to find empty cells)`;
  if (op === "contains")
    return column.type === "text" && (typeof value !== "string" || value === "")
      ? "contains needs a non-empty string"
      : null;
  return checkValue(column, value);
}

/**
 * A group's run conditions, typed for the where compiler ([] without any). The table's
 * schema check passed them against these very columns, so this fails only on a schema that
 * check never saw; the caller says so on the cell instead of running it.
 */
export function runIfOf(
  schema: TableSchema,
  group: { runIf?: readonly ConditionInput[] | undefined },
): Result<TypedCondition[], Failure> {
  const runIf = group.runIf ?? [];
  return runIf.length === 0 ? { ok: true, value: [] } : checkWhere(schema, runIf, "runIf");
}

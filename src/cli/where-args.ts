/**
 * `--where col=value` and `--where-json` as the API's `where` conditions. `col=value` is an
 * `eq` on the column (named by id or name) with the value read as the column's type, so
 * `--where n=5` sends the number 5 and `--where paid=yes` the boolean true; a value that
 * cannot be of that type is refused here (bad usage) rather than sent. `--where-json` is a
 * JSON list sent as written, except that columns and groups may be named as in `--where`:
 * `{"column", "op", "value"?}`, `{"group", "status"}` or `{"group", "outcome"}`.
 */
import type { Schemas } from "@/client/cellflow-client";
import { CELL_OUTCOMES, CELL_STATUSES } from "@/domain/statuses";
import { WHERE_OPS } from "@/domain/where";
import { type CliResult, usageError } from "./failure";
import { pickPart, type Table } from "./table-ref";

type Condition = Schemas["WhereCondition"];
type Column = Schemas["Column"];
type JsonValue = Schemas["JsonValue"];

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TRUE = new Set(["true", "yes", "1"]);
const FALSE = new Set(["false", "no", "0"]);
/** A group condition's statuses: the cell statuses, and null for rows with no cell there. */
const STATUSES: readonly Schemas["CellCondition"]["status"][] = [...CELL_STATUSES, null];

/** `value` as the column's type would hold it, or why it cannot be. */
export function coerceValue(column: Column, value: string): CliResult<JsonValue> {
  const refuse = (what: string) =>
    usageError(
      `--where ${column.name}: "${value}" is not ${what} (column ${column.id} is ${column.type})`,
    );
  switch (column.type) {
    case "number": {
      const n = Number(value.trim());
      return NUMBER.test(value.trim()) && Number.isFinite(n)
        ? { ok: true, value: n }
        : refuse("a number");
    }
    case "boolean": {
      const v = value.trim().toLowerCase();
      if (TRUE.has(v)) return { ok: true, value: true };
      if (FALSE.has(v)) return { ok: true, value: false };
      return refuse("true/false, yes/no or 1/0");
    }
    case "date":
      return Number.isNaN(Date.parse(value.trim()))
        ? refuse("a date (ISO 8601, e.g. 2026-01-31 or 2026-01-31T09:00:00Z)")
        : { ok: true, value: value.trim() };
    case "select":
      return column.options && !column.options.includes(value)
        ? refuse(`one of its options (${column.options.join(", ")})`)
        : { ok: true, value };
    case "json":
      try {
        return { ok: true, value: JSON.parse(value) as JsonValue };
      } catch {
        // Not JSON text: the value is the string itself, as a text cell would hold it.
        return { ok: true, value };
      }
    default:
      return { ok: true, value };
  }
}

/** One `--where col=value` flag as an `eq` condition on the column's id. */
export function whereEquals(table: Table, flag: string): CliResult<Condition> {
  const at = flag.indexOf("=");
  if (at <= 0) return usageError(`--where takes column=value, not "${flag}"`);
  const column = pickPart(table.columns, flag.slice(0, at).trim(), "column", table);
  if (!column.ok) return column;
  const value = coerceValue(column.value, flag.slice(at + 1));
  if (!value.ok) return value;
  return { ok: true, value: { column: column.value.id, op: "eq", value: value.value } };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** `--where-json '<list>'`: each condition checked for its shape, names resolved to ids. */
export function whereFromJson(table: Table, text: string): CliResult<Condition[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return usageError(`--where-json is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(parsed))
    return usageError('--where-json takes a JSON list, e.g. [{"column":"n","op":"gt","value":5}]');
  const out: Condition[] = [];
  for (const [i, item] of parsed.entries()) {
    const at = `--where-json item ${i + 1}`;
    if (isObject(item) && typeof item.column === "string") {
      const op = WHERE_OPS.find((o) => o === item.op);
      if (!op) return usageError(`${at}: "op" must be one of ${WHERE_OPS.join(", ")}`);
      const column = pickPart(table.columns, item.column, "column", table);
      if (!column.ok) return column;
      out.push({
        column: column.value.id,
        op,
        ...("value" in item ? { value: item.value as JsonValue } : {}),
      });
    } else if (isObject(item) && typeof item.group === "string" && "outcome" in item) {
      const outcome = CELL_OUTCOMES.find((o) => o === item.outcome);
      if (outcome === undefined)
        return usageError(`${at}: "outcome" must be one of ${CELL_OUTCOMES.join(", ")}`);
      const group = pickPart(table.groups, item.group, "group", table);
      if (!group.ok) return group;
      out.push({ group: group.value.id, outcome });
    } else if (isObject(item) && typeof item.group === "string") {
      const status = STATUSES.find((s) => s === item.status);
      if (status === undefined)
        return usageError(`${at}: "status" must be one of ${STATUSES.map(String).join(", ")}`);
      const group = pickPart(table.groups, item.group, "group", table);
      if (!group.ok) return group;
      out.push({ group: group.value.id, status });
    } else {
      return usageError(
        `${at}: a condition is {"column", "op", "value"?}, {"group", "status"} or {"group", "outcome"}`,
      );
    }
  }
  return { ok: true, value: out };
}

/** Every `--where` and `--where-json` flag of a command, in that order; none → undefined. */
export function whereOf(
  table: Table,
  equals: readonly string[],
  json: string | undefined,
): CliResult<Condition[] | undefined> {
  const out: Condition[] = [];
  for (const flag of equals) {
    const c = whereEquals(table, flag);
    if (!c.ok) return c;
    out.push(c.value);
  }
  if (json !== undefined) {
    const more = whereFromJson(table, json);
    if (!more.ok) return more;
    out.push(...more.value);
  }
  return { ok: true, value: out.length ? out : undefined };
}

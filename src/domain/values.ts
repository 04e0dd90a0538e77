/**
 * Row values against column types. `null` clears a value in any column. Nothing that
 * fails here reaches the database, so a bad value is a 400, never a 500.
 */
import type { Issue } from "../contracts/common";
import type { Column } from "../contracts/table";
import { assertNever } from "./statuses";

export const MAX_TEXT_LENGTH = 100_000;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Why `value` does not fit `column`, or null when it does. */
export function checkValue(column: Column, value: unknown): string | null {
  if (value === null) return null;
  switch (column.type) {
    case "text":
      if (typeof value !== "string") return "must be a string";
      return value.length > MAX_TEXT_LENGTH
        ? `must be at most ${MAX_TEXT_LENGTH} characters`
        : null;
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? null : "must be a number";
    case "boolean":
      return typeof value === "boolean" ? null : "must be true or false";
    case "date":
      return typeof value === "string" && ISO_DATE.test(value) && !Number.isNaN(Date.parse(value))
        ? null
        : "must be an ISO 8601 date (YYYY-MM-DD or a date-time)";
    case "select":
      if (typeof value !== "string") return "must be a string";
      return column.options?.includes(value)
        ? null
        : `must be one of: ${(column.options ?? []).join(", ")}`;
    case "json":
      return null;
    default:
      return assertNever(column.type);
  }
}

/** Issues for `data` against `columns`, with paths under `prefix`. */
export function checkRowData(
  columns: readonly Column[],
  data: Record<string, unknown>,
  prefix: string,
): Issue[] {
  const byId = new Map(columns.map((c) => [c.id, c]));
  const issues: Issue[] = [];
  for (const [key, value] of Object.entries(data)) {
    const column = byId.get(key);
    if (!column) {
      issues.push({ path: `${prefix}.${key}`, message: `unknown column "${key}"` });
      continue;
    }
    const problem = checkValue(column, value);
    if (problem) issues.push({ path: `${prefix}.${key}`, message: `${column.name}: ${problem}` });
  }
  return issues;
}

/** Empty for dependency purposes: absent, null, "", false, [] or {}. */
export function isEmptyValue(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.keys(value).length === 0;
  return false;
}

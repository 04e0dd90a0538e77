/**
 * Row values against column types. `null` clears a value in any column. Nothing that
 * fails here reaches the database, so a bad value is a 400, never a 500.
 */
import type { Issue } from "@/contracts/common";
import type { Column } from "@/contracts/table";
import { assertNever } from "./statuses";

export const MAX_TEXT_LENGTH = 100_000;
/**
 * An ISO 8601 date or date-time, as the API stores it. The grid and the CSV import's
 * type guess use this one pattern, so what they offer is what the API takes.
 */
export const ISO_DATE =
  /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

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

/** JSON nested deeper than this is refused: nothing Cellflow stores needs more. */
export const MAX_JSON_DEPTH = 100;

/**
 * True when the JSON text opens more than `max` arrays/objects inside each other. A scan
 * of the text, run before JSON.parse: the parser copes with any depth, but everything
 * after it (zod, the checks below, JSON.stringify on the way to the database) recurses
 * and would overflow the stack on a few thousand levels. Brackets inside strings do not
 * count; the text need not be valid JSON (the parser judges that).
 */
export function jsonDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      depth++;
      if (depth > max) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

/** Why `text` cannot be stored as it is (Postgres text and jsonb), or null. */
export function unstorableText(text: string): string | null {
  if (text.includes("\u0000"))
    return "contains a NUL character (\\u0000), which cannot be stored; remove it";
  if (!text.isWellFormed())
    return "contains an unpaired UTF-16 surrogate (half of a character); text holding one, or a NUL character, cannot be stored";
  return null;
}

/**
 * Keys a JavaScript object cannot hold as data: `__proto__` is dropped or, worse, taken
 * as the object's prototype by most code that copies objects, so it would not survive.
 */
const FORBIDDEN_KEYS = new Set(["__proto__"]);
const MAX_VALUE_ISSUES = 50;

/**
 * Issues for a parsed JSON value that could not be stored or would not come back as sent:
 * NUL characters and unpaired surrogates (in strings and keys) and `__proto__` keys.
 * Walks with an explicit stack, so no input depth can overflow the call stack.
 */
export function jsonValueIssues(value: unknown, root = ""): Issue[] {
  const issues: Issue[] = [];
  const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
  const stack: { value: unknown; path: string }[] = [{ value, path: root }];
  // A body can hold a million bad strings; the first few say enough.
  for (
    let next = stack.pop();
    next !== undefined && issues.length < MAX_VALUE_ISSUES;
    next = stack.pop()
  ) {
    const v = next.value;
    if (typeof v === "string") {
      const problem = unstorableText(v);
      if (problem) issues.push({ path: next.path, message: problem });
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => {
        stack.push({ value: item, path: join(next.path, String(i)) });
      });
    } else if (v !== null && typeof v === "object") {
      for (const [k, item] of Object.entries(v)) {
        const path = join(next.path, k);
        const unstorable = unstorableText(k);
        const problem = FORBIDDEN_KEYS.has(k)
          ? `the key "${k}" is not allowed (it would not survive as data)`
          : unstorable && `the key ${unstorable}`;
        if (problem) issues.push({ path, message: problem });
        else stack.push({ value: item, path });
      }
    }
  }
  return issues;
}

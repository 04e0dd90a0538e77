/**
 * Cell values between the grid and the API: what an edit's text means for a column's
 * type (refused with a message before it is sent, so the API's 400 is the exception),
 * and how a stored value reads in a cell.
 */
import type { Column } from "@/contracts/table";
import { ISO_DATE } from "@/domain/values";

export type Parsed = { ok: true; value: unknown } | { ok: false; message: string };

/** The value to store for `text` typed into a cell of `column`; "" clears the cell (null). */
export function parseInput(column: Pick<Column, "type" | "options">, text: string): Parsed {
  const t = text.trim();
  if (t === "") return { ok: true, value: null };
  switch (column.type) {
    case "text":
      return { ok: true, value: text };
    case "number": {
      const n = Number(t);
      return Number.isFinite(n) && /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)
        ? { ok: true, value: n }
        : { ok: false, message: "Enter a number, e.g. 42 or -3.5" };
    }
    case "boolean": {
      const v = t.toLowerCase();
      if (["true", "yes", "1"].includes(v)) return { ok: true, value: true };
      if (["false", "no", "0"].includes(v)) return { ok: true, value: false };
      return { ok: false, message: "Enter true or false" };
    }
    case "date":
      return ISO_DATE.test(t) && !Number.isNaN(Date.parse(t))
        ? { ok: true, value: t }
        : { ok: false, message: "Enter a date as YYYY-MM-DD (optionally with a time)" };
    case "json":
      try {
        return { ok: true, value: JSON.parse(t) as unknown };
      } catch {
        return { ok: false, message: 'Enter JSON, e.g. {"a": 1} or [1, 2] or "text"' };
      }
    case "select":
      return column.options?.includes(t)
        ? { ok: true, value: t }
        : { ok: false, message: `Choose one of: ${(column.options ?? []).join(", ")}` };
    default: {
      const never: never = column.type;
      return { ok: false, message: `Unknown column type ${String(never)}` };
    }
  }
}

/** How a stored value reads in a cell (and in the edit box, before editing). */
export function displayValue(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

export type Edit =
  | { kind: "invalid"; message: string }
  | { kind: "unchanged" }
  | { kind: "save"; value: unknown };

/**
 * What a cell's draft comes to against the value stored: refused (not the column's type),
 * no change (it reads the same, so no request), or the value to save.
 */
export function checkEdit(
  column: Pick<Column, "type" | "options">,
  draft: string,
  stored: unknown,
): Edit {
  const parsed = parseInput(column, draft);
  if (!parsed.ok) return { kind: "invalid", message: parsed.message };
  if (displayValue(stored) === displayValue(parsed.value)) return { kind: "unchanged" };
  return { kind: "save", value: parsed.value };
}

/**
 * The order `GET /rows` reads a table in, and the cursors that page through it.
 * Invariants: the order is total (a column's sort key, then the row's position, which is
 * unique in its table), so a cursor names one place in it; a cursor is opaque to clients
 * (base64url JSON), belongs to one order (a cursor of another order is refused), and any
 * cursor this module accepts compiles to SQL that cannot fail: a tampered one is a 400
 * here, never a database error. How each column type sorts: store/rows/order-sql.ts.
 */
import { z } from "zod";
import type { SortDirection } from "@/contracts/rows";
import type { ColumnType, TableSchema } from "@/contracts/table";
import { type Failure, invalid } from "./errors";
import type { Result } from "./result";
import { assertNever } from "./statuses";
import { jsonValueIssues } from "./values";

/** Text (and JSON text) sorts by its first this many characters, so a cursor stays short. */
export const SORT_TEXT_LENGTH = 256;

export interface RowOrder {
  /** null: the row position order. */
  column: { id: string; type: ColumnType } | null;
  dir: SortDirection;
}

/**
 * A row's sort key as the cursor carries it: numbers as decimal text (exact), dates as
 * UTC ISO text with microseconds, text and JSON as (truncated) text, booleans as is;
 * null for an empty value or one of another type (those rows sort last).
 */
export type SortKey = string | boolean | null;

/** The place after which the next page starts: the last row's key and position. */
export interface RowCursor {
  key: SortKey;
  position: number;
}

export function rowOrder(
  schema: TableSchema,
  orderBy: string | undefined,
  dir: SortDirection,
): Result<RowOrder, Failure> {
  if (orderBy === undefined) return { ok: true, value: { column: null, dir } };
  const column = schema.columns.find((c) => c.id === orderBy);
  if (!column)
    return {
      ok: false,
      reason: invalid([{ path: "orderBy", message: `unknown column "${orderBy}"` }]),
    };
  return { ok: true, value: { column: { id: column.id, type: column.type }, dir } };
}

const Stored = z.strictObject({
  o: z.string().nullable(),
  d: z.enum(["asc", "desc"]),
  k: z.union([z.string(), z.boolean(), z.null()]),
  p: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});

export function encodeRowCursor(order: RowOrder, at: RowCursor): string {
  const stored: z.infer<typeof Stored> = {
    o: order.column?.id ?? null,
    d: order.dir,
    k: at.key,
    p: at.position,
  };
  return Buffer.from(JSON.stringify(stored), "utf8").toString("base64url");
}

const refused = (message: string): { ok: false; reason: Failure } => ({
  ok: false,
  reason: invalid([{ path: "cursor", message }]),
});

/** The cursor's place in `order`; null for no cursor (the first page). */
export function decodeRowCursor(
  cursor: string | undefined,
  order: RowOrder,
): Result<RowCursor | null, Failure> {
  if (cursor === undefined || cursor === "") return { ok: true, value: null };
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    return refused("not a cursor this API returned");
  }
  const parsed = Stored.safeParse(raw);
  if (!parsed.success) return refused("not a cursor this API returned");
  const { o, d, k, p } = parsed.data;
  if (o !== (order.column?.id ?? null) || d !== order.dir)
    return refused("this cursor pages another order: pass the same orderBy and dir as before");
  if (k !== null && !keyFits(k, order.column?.type ?? null))
    return refused("not a cursor this API returned");
  return { ok: true, value: { key: k, position: p } };
}

const DECIMAL = /^-?\d{1,400}(\.\d{1,400})?$/;
const UTC_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** Whether a key has the shape the SQL of its column type reads back without failing. */
function keyFits(key: string | boolean, type: ColumnType | null): boolean {
  if (type === null) return false;
  switch (type) {
    case "boolean":
      return typeof key === "boolean";
    case "number":
      return typeof key === "string" && DECIMAL.test(key);
    case "date":
      return typeof key === "string" && UTC_INSTANT.test(key);
    case "text":
    case "select":
    case "json":
      return (
        typeof key === "string" &&
        key !== "" &&
        [...key].length <= SORT_TEXT_LENGTH &&
        jsonValueIssues(key).length === 0
      );
    default:
      return assertNever(type);
  }
}

import { z } from "zod";
import { CELL_OUTCOMES, CELL_STATUSES } from "@/domain/statuses";
import { ClientId, EntityId, JsonValue } from "./common";
import { Where } from "./where";

export const CellStatus = z.enum(CELL_STATUSES);
export type CellStatus = z.infer<typeof CellStatus>;
export const CellOutcome = z.enum(CELL_OUTCOMES);
export type CellOutcome = z.infer<typeof CellOutcome>;

/** Values keyed by column id; each is checked against its column's type by the service. */
export const RowData = z.record(ClientId, JsonValue);
export type RowData = z.infer<typeof RowData>;

export const MAX_ROWS_PER_INSERT = 1_000;

export const InsertRowsRequest = z.strictObject({
  rows: z
    .array(z.strictObject({ data: RowData.default({}) }))
    .min(1, "give at least one row")
    .max(MAX_ROWS_PER_INSERT, `at most ${MAX_ROWS_PER_INSERT} rows per call`),
});
export type InsertRowsRequest = z.infer<typeof InsertRowsRequest>;

export const PatchRowRequest = z.strictObject({ data: RowData });
export type PatchRowRequest = z.infer<typeof PatchRowRequest>;

/** Directions of `orderBy` (and of the default position order). */
export const SORT_DIRECTIONS = ["asc", "desc"] as const;
export const SortDirection = z.enum(SORT_DIRECTIONS);
export type SortDirection = z.infer<typeof SortDirection>;

/**
 * `GET /rows` query parameters; `where` arrives as URL-encoded JSON and is parsed (with the
 * JSON body checks) before this schema sees it (`parseQuery`'s JSON parameters).
 */
export const ListRowsQuery = z.strictObject({
  // A cursor carries the last row's sort key (text keys at most 256 characters).
  cursor: z.string().max(4_000).optional(),
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
  where: Where.optional(),
  orderBy: ClientId.optional(),
  dir: SortDirection.default("asc"),
  /** A saved view's id: its where and order apply (services/views.ts says how they combine). */
  view: EntityId.optional(),
  /**
   * A page's `prevCursor`: the rows just before that row (the last `limit` of them, in
   * the order), so a reader can page backwards from anywhere it landed.
   */
  before: z.string().max(4_000).optional(),
  /** `end`: the last `limit` rows of the order (keyset from the end, no offset). */
  from: z.enum(["start", "end"]).optional(),
  /**
   * Where to land, as a fraction of the rows (0 first, 1 last): in row position order by
   * position, between the first and the last (no count, no offset); in a column's order
   * by rank.
   */
  seek: z.coerce.number().min(0).max(1).optional(),
  /** `true`: the answer says how many rows match (`total`). */
  total: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional(),
});
export type ListRowsQuery = z.infer<typeof ListRowsQuery>;

/** The query parameters whose values are JSON text. */
export const LIST_ROWS_JSON_PARAMS = ["where"] as const;

export const CellView = z.object({
  status: CellStatus,
  outcome: z.union([CellOutcome, z.null()]),
  executionId: z.string(),
  dispatchId: z.string().nullable(),
  error: z.string().nullable(),
  runningBlockIds: z.array(z.string()),
  blockErrors: z.record(z.string(), z.string()),
  updatedAt: z.string(),
  /** A waterfall's cell: the step (1-based) whose answer it holds; absent when none won. */
  winningStep: z.number().int().optional(),
});
export type CellView = z.infer<typeof CellView>;

export const RowView = z.object({
  id: z.string(),
  position: z.number().int(),
  data: z.record(z.string(), JsonValue),
  cells: z.record(z.string(), CellView),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type RowView = z.infer<typeof RowView>;

/**
 * A page of rows in the order asked for; `nextCursor` is null on the last page,
 * `prevCursor` (for `before`) null on the first.
 */
export const RowPage = z.object({
  rows: z.array(RowView),
  nextCursor: z.string().nullable(),
  prevCursor: z.string().nullable(),
  /** The rows that match (asked for with `total=true`). */
  total: z.number().int().optional(),
});
export type RowPage = z.infer<typeof RowPage>;

/** The rows `POST /rows` inserted, in the order given. */
export const InsertedRows = z.object({ rows: z.array(RowView) });
export type InsertedRows = z.infer<typeof InsertedRows>;

export const MAX_ROWS_PER_DELETE = 10_000;

/**
 * `POST /rows/delete`: the rows named by id (at most 10,000; ids the table does not have
 * are ignored), every row matching a `where` list as runs and row filters take it, or
 * every row of the table (`all: true`, said outright: an empty `where` is refused).
 */
export const DeleteRowsRequest = z.union([
  z.strictObject({
    rowIds: z
      .array(EntityId)
      .min(1, "give at least one row id")
      .max(MAX_ROWS_PER_DELETE, `at most ${MAX_ROWS_PER_DELETE} row ids per call`),
  }),
  z.strictObject({ where: Where }),
  z.strictObject({ all: z.literal(true) }),
]);
export type DeleteRowsRequest = z.infer<typeof DeleteRowsRequest>;

/** How many rows the bulk delete removed. */
export const DeletedRows = z.object({ deleted: z.number().int() });
export type DeletedRows = z.infer<typeof DeletedRows>;

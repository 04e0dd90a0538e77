import { z } from "zod";
import { CELL_OUTCOMES, CELL_STATUSES } from "../domain/statuses";
import { ClientId, JsonValue } from "./common";

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

export const ListRowsQuery = z.strictObject({
  cursor: z.string().max(100).optional(),
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
});
export type ListRowsQuery = z.infer<typeof ListRowsQuery>;

export const CellView = z.object({
  status: CellStatus,
  outcome: CellOutcome.nullable(),
  executionId: z.string(),
  dispatchId: z.string().nullable(),
  error: z.string().nullable(),
  runningBlockIds: z.array(z.string()),
  blockErrors: z.record(z.string(), z.string()),
  updatedAt: z.string(),
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

/** A page of rows in position order; `nextCursor` is null on the last page. */
export const RowPage = z.object({ rows: z.array(RowView), nextCursor: z.string().nullable() });
export type RowPage = z.infer<typeof RowPage>;

/** The rows `POST /rows` inserted, in the order given. */
export const InsertedRows = z.object({ rows: z.array(RowView) });
export type InsertedRows = z.infer<typeof InsertedRows>;

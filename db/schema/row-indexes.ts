import { index, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { rowIndexKind, rowIndexStatus } from "./enums";

/**
 * The partial expression indexes on `rows` that serve one table's sorts and filters
 * (src/store/row-indexes): one row per (table, column, column type, kind), named by
 * `index_name`. `sort_asc` and `sort_desc` are btree indexes on a column's sort key and
 * the position (a direction's order, null keys last, ties by position ascending, is not
 * the other's read backwards, so each direction has its own); `trgm` is a gin pg_trgm
 * index on the lowered text, for `contains`. At most five indexes (pending, building or
 * ready) per table. No foreign key: the row outlives its table's deletion until the
 * sweep has dropped the index it names.
 */
export const rowIndexes = pgTable(
  "row_indexes",
  {
    indexName: text("index_name").primaryKey(),
    tableId: text("table_id").notNull(),
    columnId: text("column_id").notNull(),
    /** The column's type when the index was asked for: its key expression depends on it. */
    columnType: text("column_type").notNull(),
    kind: rowIndexKind("kind").notNull(),
    /** pending → building → ready | failed. */
    status: rowIndexStatus("status").notNull().default("pending"),
    error: text("error"),
    requestedAt: timestamp("requested_at", { withTimezone: true }).notNull().defaultNow(),
    /** When a builder claimed it (a claim older than the lease is taken over). */
    startedAt: timestamp("started_at", { withTimezone: true }),
    readyAt: timestamp("ready_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("row_indexes_key_idx").on(t.tableId, t.columnId, t.columnType, t.kind),
    index("row_indexes_status_idx").on(t.status),
  ],
);

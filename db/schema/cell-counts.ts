import {
  bigint,
  boolean,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
} from "drizzle-orm/pg-core";
import { dispatches } from "./dispatches";
import { cellOutcome, cellStatus } from "./enums";
import { tables } from "./tables";

/**
 * What each statement on `cells` or `rows` changed in the counts, appended by statement
 * triggers (migration `progress_counters`): one row per (table, group, run, status,
 * outcome) a statement moved, however many cells it wrote. Append-only, so no writer ever
 * waits on another for a count; the fold (store/progress/fold.ts) moves them into the base
 * tables below. A count is base + the deltas not yet folded. No foreign keys: a table's
 * delete appends the deltas of its cascaded rows as it goes (the fold drops those).
 */
export const cellCountDeltas = pgTable(
  "cell_count_deltas",
  {
    tableId: text("table_id").notNull(),
    /** Null: a change in the table's row count (`n` rows inserted or, negative, deleted). */
    groupId: text("group_id"),
    dispatchId: text("dispatch_id"),
    status: cellStatus("status"),
    /** Kept for `completed` cells only (an outcome left on another status is not counted). */
    outcome: cellOutcome("outcome"),
    n: integer("n").notNull(),
  },
  (t) => [index("cell_count_deltas_table_idx").on(t.tableId)],
);

/** Folded cell counts per (table, group, status, outcome); outcome null unless completed. */
export const cellCounts = pgTable(
  "cell_counts",
  {
    tableId: text("table_id")
      .notNull()
      .references(() => tables.id, { onDelete: "cascade" }),
    groupId: text("group_id").notNull(),
    status: cellStatus("status").notNull(),
    outcome: cellOutcome("outcome"),
    n: bigint("n", { mode: "number" }).notNull(),
  },
  (t) => [
    unique("cell_counts_key").on(t.tableId, t.groupId, t.status, t.outcome).nullsNotDistinct(),
  ],
);

/** Folded cell counts per run (the cells whose dispatch_id is the run) and status. */
export const runCellCounts = pgTable(
  "run_cell_counts",
  {
    dispatchId: text("dispatch_id")
      .notNull()
      .references(() => dispatches.id, { onDelete: "cascade" }),
    status: cellStatus("status").notNull(),
    n: bigint("n", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.dispatchId, t.status] })],
);

/**
 * Folded cell counts per run, group and status: what a Stop of some groups of a run (or of
 * a run of several groups) moves to `cancelled` without reading a cell. Maintained by the
 * database, not the fold's code: a statement trigger on the fold's delete of deltas adds
 * them here (migration `run_group_counts`), so a fold of any version keeps it. Complete
 * only for the runs created after that migration (`dispatches.group_counted`).
 */
export const runGroupCellCounts = pgTable(
  "run_group_cell_counts",
  {
    dispatchId: text("dispatch_id")
      .notNull()
      .references(() => dispatches.id, { onDelete: "cascade" }),
    groupId: text("group_id").notNull(),
    status: cellStatus("status").notNull(),
    n: bigint("n", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.dispatchId, t.groupId, t.status] })],
);

/**
 * A table's folded row count, and when its last `progress` event went out: the fold sends
 * one for a table whose counts it changed (`progressPending`) at most once a second.
 */
export const tableCounts = pgTable("table_counts", {
  tableId: text("table_id")
    .primaryKey()
    .references(() => tables.id, { onDelete: "cascade" }),
  rows: bigint("rows", { mode: "number" }).notNull().default(0),
  progressPending: boolean("progress_pending").notNull().default(false),
  progressSentAt: timestamp("progress_sent_at", { withTimezone: true }),
});

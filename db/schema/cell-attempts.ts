import { bigserial, index, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { cellOutcome, cellStatus } from "./enums";
import { rows } from "./tables";

/**
 * Ended attempts of a cell, recorded when the cell row moves on from them (a new run's
 * stamp replaces the execution, a re-drive hands an interrupted attempt back, an edit
 * clears a finished cell), never on a cell's first run: the cell row itself is its
 * current attempt. Written by the `cells` triggers of migration 0025 and by `clear.ts`;
 * a cell keeps its last ATTEMPTS_KEPT records (the insert trigger prunes older ones).
 */
export const cellAttempts = pgTable(
  "cell_attempts",
  {
    /** Record order: a cell's attempts were replaced in this order. */
    id: bigserial("id", { mode: "number" }).primaryKey(),
    tableId: text("table_id").notNull(),
    rowId: text("row_id")
      .notNull()
      .references(() => rows.id, { onDelete: "cascade" }),
    groupId: text("group_id").notNull(),
    executionId: text("execution_id").notNull(),
    attempt: integer("attempt").notNull(),
    status: cellStatus("status").notNull(),
    outcome: cellOutcome("outcome"),
    error: text("error"),
    startedAt: timestamp("started_at", { withTimezone: true }),
    endedAt: timestamp("ended_at", { withTimezone: true }),
    /** The group's output values when the attempt completed (null otherwise). */
    outputs: jsonb("outputs"),
    blockErrors: jsonb("block_errors").notNull().default({}),
    /** What each provider, step or model did, with `costCredits` (the cell's `details`). */
    details: jsonb("details").notNull().default({}),
    /** The execution whose finished blocks this one reused (a `resume: true` run). */
    resumedFrom: text("resumed_from"),
  },
  (t) => [index("cell_attempts_cell_idx").on(t.rowId, t.groupId, t.id)],
);

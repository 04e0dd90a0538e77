import { sql } from "drizzle-orm";
import { index, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * The run-cancel outbox: remote runs (trigger.dev) a Stop or a table delete found running,
 * written in the same transaction as the tombstones, deleted once the platform confirmed
 * the cancel (or said the run is gone), or once a drainer found the run still carrying
 * work the Stop did not cover (left to end by itself). A row outlives the process that wrote it: any
 * drainer (the API process's loop, the scheduled maintenance task) finishes it. No
 * foreign key to the table: a deleted table's runs still need cancelling.
 */
export const runCancels = pgTable(
  "run_cancels",
  {
    runId: text("run_id").primaryKey(),
    tableId: text("table_id").notNull(),
    /**
     * The row the run carries (trigger.dev: one run, one row), null for a table delete's
     * runs. At drain time, a run whose row still has a queued or running cell, or lacks
     * one of `cascadeGroups`, still carries work the Stop did not cover: it is not cancelled.
     */
    rowId: text("row_id"),
    /**
     * The auto-run groups the Stop left unheld (src/domain/auto-run.ts `autoRunUnheld`):
     * the run's carrier may still stamp one its row lacks once the stopped attempt ends.
     */
    cascadeGroups: text("cascade_groups").array().notNull().default(sql`'{}'::text[]`),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** Not before this time: the backoff after a failure, or a platform's Retry-After. */
    dueAt: timestamp("due_at", { withTimezone: true }).notNull().defaultNow(),
    /** A drainer holds the row until then; a drainer that died lets it go by itself. */
    leasedUntil: timestamp("leased_until", { withTimezone: true }),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
  },
  (t) => [index("run_cancels_due_idx").on(t.dueAt)],
);

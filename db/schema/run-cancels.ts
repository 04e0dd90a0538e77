import { index, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * The run-cancel outbox: remote runs (trigger.dev) a Stop or a table delete found running,
 * written in the same transaction as the tombstones, deleted once the platform confirmed
 * the cancel (or said the run is gone). A row outlives the process that wrote it: any
 * drainer (the API process's loop, the scheduled maintenance task) finishes it. No
 * foreign key to the table: a deleted table's runs still need cancelling.
 */
export const runCancels = pgTable(
  "run_cancels",
  {
    runId: text("run_id").primaryKey(),
    tableId: text("table_id").notNull(),
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

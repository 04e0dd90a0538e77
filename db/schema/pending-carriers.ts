import { pgTable, text, timestamp } from "drizzle-orm/pg-core";

/**
 * Carrier runs triggered on trigger.dev and not started yet, one per row at most: an
 * enqueue for a row that has one folds into it instead of triggering another run. The
 * run deletes its entry (by its key) as it starts, before it reads the row, so an enqueue
 * after that starts a new run. An entry older than the backend's staleness bound belongs
 * to a run the platform lost, and is replaced. No foreign key: a deleted row's entry only
 * waits out that bound.
 */
export const pendingCarriers = pgTable("pending_carriers", {
  rowId: text("row_id").primaryKey(),
  tableId: text("table_id").notNull(),
  /** The dispatch whose window the run slides; a carrier for another dispatch does not fold. */
  dispatchId: text("dispatch_id"),
  /** Part of the run's idempotency key, and in its payload: the run deletes only its own entry. */
  runKey: text("run_key").notNull(),
  enqueuedAt: timestamp("enqueued_at", { withTimezone: true }).notNull().defaultNow(),
});

import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { tables } from "./tables";
import { workspaces } from "./workspaces";

/**
 * A table's run on a cron. `nextRunAt` is the next due time; the dispatch that starts a
 * run moves it forward in the transaction that creates the run, guarded on the value it
 * read (store/schedules/claim.ts), so one due time starts at most one run. A PATCH writes
 * only over the `version` it read (store/schedules/update.ts).
 */
export const schedules = pgTable(
  "schedules",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    tableId: text("table_id")
      .notNull()
      .references(() => tables.id, { onDelete: "cascade" }),
    /** Five fields, read in `timezone`. */
    cron: text("cron").notNull(),
    /** IANA name. */
    timezone: text("timezone").notNull().default("UTC"),
    enabled: boolean("enabled").notNull().default(true),
    /** The body of `POST /runs` it starts (without rowIds and dryRun), as given. */
    run: jsonb("run").notNull(),
    /** The next due time (kept while disabled; enabling computes it again from now). */
    nextRunAt: timestamp("next_run_at", { withTimezone: true }).notNull(),
    lastRunAt: timestamp("last_run_at", { withTimezone: true }),
    lastDispatchId: text("last_dispatch_id"),
    /** The last due time skipped because the run before was still active, and how many. */
    lastSkippedAt: timestamp("last_skipped_at", { withTimezone: true }),
    skipped: integer("skipped").notNull().default(0),
    /** Why the last due time started no run (its groups gone, …); null after one started. */
    lastError: text("last_error"),
    /**
     * Moves on every write of what a PATCH merges or decides the due time from (cron,
     * timezone, enabled, run, next_run_at): a PATCH writes only over the version it read.
     */
    version: integer("version").notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("schedules_table_idx").on(t.tableId),
    index("schedules_due_idx").on(t.nextRunAt).where(sql`${t.enabled}`),
  ],
);

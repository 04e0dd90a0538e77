import { index, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { rows, tables } from "./tables";

/** Per-attempt workflow state, so a paused or re-driven attempt resumes instead of redoing. */
export const executions = pgTable(
  "executions",
  {
    id: text("id").primaryKey(),
    tableId: text("table_id")
      .notNull()
      .references(() => tables.id, { onDelete: "cascade" }),
    rowId: text("row_id")
      .notNull()
      .references(() => rows.id, { onDelete: "cascade" }),
    groupId: text("group_id").notNull(),
    workflowId: text("workflow_id"),
    workflowVersion: integer("workflow_version"),
    /** Outputs of finished blocks, keyed by block id. */
    checkpoints: jsonb("checkpoints").notNull().default({}),
    /**
     * The executions this one resumes (a `resume: true` run), newest first: the one it
     * replaced, then the one that one resumed, and so on. Their step records
     * (`execution_steps`) are this execution's to reuse.
     */
    resumes: text("resumes").array().notNull().default([]),
    pauseToken: text("pause_token"),
    resumeData: jsonb("resume_data"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("executions_row_idx").on(t.rowId, t.groupId)],
);

import { index, integer, jsonb, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { childRunStatus } from "./enums";
import { rows } from "./tables";

/**
 * Sub-workflow runs of an attempt, one per `workflow` block call and per `foreach` item:
 * children run inline in their parent's attempt (on trigger.dev a child run of its own
 * would wait with the row lock held), and this is their record — id, parent, status,
 * output or error — listed with the attempt in the cell's history. `id` is the child's
 * execution id (`<parent>:<blockId>` or `<parent>:<blockId>:<index>`), the same in every
 * attempt of the execution, so the key includes the attempt. Written only while the cell
 * runs that execution and attempt; children an attempt left running (a Stop, a crash)
 * are marked `cancelled` when it ends or when the next attempt starts. A foreach item
 * that ended `completed` keeps its output with its step record (execution_steps), written
 * in the same statement; `output` here is then null.
 */
export const childRuns = pgTable(
  "child_runs",
  {
    id: text("id").notNull(),
    attempt: integer("attempt").notNull(),
    /** The cell's execution the child belongs to. */
    executionId: text("execution_id").notNull(),
    /** The execution that called it: the cell's, or another child's. */
    parentId: text("parent_id").notNull(),
    rowId: text("row_id")
      .notNull()
      .references(() => rows.id, { onDelete: "cascade" }),
    groupId: text("group_id").notNull(),
    blockId: text("block_id").notNull(),
    /** The `foreach` item; null for a `workflow` block. */
    itemIndex: integer("item_index"),
    workflowId: text("workflow_id").notNull(),
    status: childRunStatus("status").notNull(),
    output: jsonb("output"),
    error: text("error"),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull().defaultNow(),
    endedAt: timestamp("ended_at", { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.id, t.attempt] }),
    index("child_runs_execution_idx").on(t.executionId, t.attempt),
  ],
);

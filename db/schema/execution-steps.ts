import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from "drizzle-orm/pg-core";
import { rows } from "./tables";

/**
 * What an execution finished inside its child runs, one row per step, so a later attempt
 * reuses it instead of running it again: a block of a sub-workflow or of a foreach item
 * (at any depth), and each foreach item that ended `ok` (at any depth, the cell's own
 * workflow included). The cell's own blocks stay in `executions.checkpoints`.
 *
 * Keyed by the cell's execution, the run the step belongs to (`scope`: "" for the cell's
 * workflow, else the child's execution id after the cell's, e.g. `each:3:inner`) and the
 * step (`key`: a block id, or `<blockId>#<index>` for an item). A resumed execution reads
 * its own records and those of the executions it resumes (`executions.resumes`): nothing
 * is copied. Written one row per step, fenced by the attempt (`store/execution-steps`).
 */
export const executionSteps = pgTable(
  "execution_steps",
  {
    executionId: text("execution_id").notNull(),
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    rowId: text("row_id")
      .notNull()
      .references(() => rows.id, { onDelete: "cascade" }),
    groupId: text("group_id").notNull(),
    /** The attempt that wrote it. */
    attempt: integer("attempt").notNull(),
    /**
     * A block's: the digest of its run's inputs; an item's: of the item. A record is
     * reused only where the digest is the same (an item list or a mapping that changed
     * runs again).
     */
    digest: text("digest").notNull(),
    output: jsonb("output"),
    /** A block's: the edges it took. */
    taken: text("taken").array().notNull().default([]),
    /** It holds failed foreach items (its own or deeper): a resumed execution runs it again. */
    retryOnResume: boolean("retry_on_resume").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.executionId, t.scope, t.key] }),
    // A deleted row takes its records with it (foreign key): found by this, not a scan.
    index("execution_steps_row_idx").on(t.rowId),
  ],
);

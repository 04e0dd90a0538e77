import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  index,
  integer,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { creditState } from "./enums";
import { workspaces } from "./workspaces";

/**
 * The credit ledger: one entry per charge key, (`execution_id`, `source`), where the
 * execution is the one whose block or step called (a sub-workflow item's own) and the
 * source names what was called and where (`<enrichmentId>` for a group's enrichment,
 * `<enrichmentId>@<blockId>` for a block), so retries, re-drives and resumes of one
 * execution never charge twice and two paid blocks of one execution each charge.
 * An entry is `reserved` before the call, under every cap that applies, and becomes
 * `charged` only in the transaction of the fenced write that records the provider's
 * answer; any other end deletes it (released). The cell's attempt that reserved it
 * (`cell_execution_id`, `attempt`) is what the release trigger (migration `credit_ledger_release`) keys on.
 * Entries from before reservations existed are `charged` with no cell. A workflow's test
 * run (`POST /api/workflows/:id/test`) has no cell: its entries name the test run as
 * `cell_execution_id` with `attempt` 0 and no table, row, group or run.
 */
export const usage = pgTable(
  "usage",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    executionId: text("execution_id").notNull(),
    source: text("source").notNull(),
    /** The amount, in 1/1000 of a credit. */
    milli: bigint("milli", { mode: "number" }).notNull().default(0),
    state: creditState("state").notNull().default("charged"),
    /** The cell attempt that reserved it: a release keys on it (no foreign key: the ledger outlives rows). */
    tableId: text("table_id"),
    rowId: text("row_id"),
    groupId: text("group_id"),
    cellExecutionId: text("cell_execution_id"),
    attempt: integer("attempt"),
    /** The run the cell belonged to (its `creditsUsed` is the sum of its charged entries). */
    dispatchId: text("dispatch_id"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** When it was charged (null while reserved); the month it counts in. */
    chargedAt: timestamp("charged_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("usage_execution_source_idx").on(t.executionId, t.source),
    // This month's charges of a workspace (usage summary by source).
    index("usage_workspace_charged_idx").on(t.workspaceId, t.chargedAt),
    index("usage_reserved_attempt_idx")
      .on(t.cellExecutionId, t.attempt)
      .where(sql`${t.state} = 'reserved'`),
    // A run's entries (its `creditsUsed`), and one row's of a run (its per-row budget).
    index("usage_dispatch_row_idx").on(t.dispatchId, t.rowId),
  ],
);

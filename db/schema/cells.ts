import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgSequence,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from "drizzle-orm/pg-core";
import { cellOutcome, cellStatus } from "./enums";
import { rows, tables } from "./tables";

/**
 * Orders attempts: an execution id is `ex2_<12 hex digits of this sequence><20 random hex>`,
 * so of two attempts of a cell the later-stamped one sorts higher. Clients rely on it to
 * keep an event of an older attempt from overwriting a newer one (ids made before this
 * sequence, `ex_<32 random hex>`, have no order and are older than every `ex2_` id).
 */
export const executionSeq = pgSequence("cellflow_execution_seq");

/**
 * One row per (row, group) that has ever been requested. Outputs live in rows.data; a
 * cell only records where its run stands. Absent means never run or cleared.
 */
export const cells = pgTable(
  "cells",
  {
    tableId: text("table_id")
      .notNull()
      .references(() => tables.id, { onDelete: "cascade" }),
    rowId: text("row_id")
      .notNull()
      .references(() => rows.id, { onDelete: "cascade" }),
    groupId: text("group_id").notNull(),
    /** The row's position (immutable), so a dispatch walks its rows in order off one index. */
    rowPosition: bigint("row_position", { mode: "number" }).notNull(),
    status: cellStatus("status").notNull(),
    /** The only attempt allowed to write this cell. */
    executionId: text("execution_id").notNull(),
    dispatchId: text("dispatch_id"),
    /**
     * The newest run request that stamped this cell (`dispatches.seq`): what lifts a Stop's
     * hold on the row (store/cells/stamp.ts, notHeld). A re-stamp keeps the greater of the
     * two; a resume (which leaves the run: dispatch_id null) keeps it; a carrier's auto-run
     * stamp, which is no request, inherits the row's newest. Null: stamped before it was kept.
     */
    requestSeq: bigint("request_seq", { mode: "number" }),
    attempt: integer("attempt").notNull().default(0),
    /**
     * How often this execution's attempts were lost: the re-drive found the cell running
     * with its row lock free (its worker or lock session died) and handed it back. Not
     * counted by a pause, a resume or a shutdown's hand-back, which end nothing badly;
     * the re-drive gives up on the cell at MAX_LOSSES. A new execution starts at 0.
     */
    losses: integer("losses").notNull().default(0),
    outcome: cellOutcome("outcome"),
    error: text("error"),
    runningBlockIds: text("running_block_ids").array().notNull().default(sql`'{}'::text[]`),
    blockErrors: jsonb("block_errors").notNull().default({}),
    details: jsonb("details").notNull().default({}),
    /**
     * A `resume: true` run's stamp: the ended execution whose checkpoints this one
     * starts from (copied under the new id when stamped). Null on every other stamp.
     */
    resumedFrom: text("resumed_from"),
    /** The task backend's run id of the carrier, for cancel by run id. */
    runId: text("run_id"),
    /**
     * The running attempt reserved credits (usage entries in state `reserved`): when the
     * cell moves on from that attempt (any end, a requeue, a Stop, a re-stamp, a delete),
     * the ledger trigger (migration `credit_ledger_release`) releases what it did not settle. Cleared by the
     * next claim, so the trigger never runs for a cell that reserved nothing.
     */
    creditsHeld: boolean("credits_held").notNull().default(false),
    queuedAt: timestamp("queued_at", { withTimezone: true }),
    startedAt: timestamp("started_at", { withTimezone: true }),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.rowId, t.groupId] }),
    index("cells_execution_idx").on(t.executionId),
    index("cells_table_status_idx").on(t.tableId, t.status),
    index("cells_dispatch_status_idx")
      .on(t.dispatchId, t.status)
      .where(sql`${t.dispatchId} is not null`),
    // The sliding window reads only a dispatch's unfinished cells, in row order.
    index("cells_dispatch_active_idx")
      .on(t.dispatchId, t.rowPosition)
      .where(sql`${t.status} in ('queued', 'running')`),
    // The System page's last cell errors, newest first: a table's few newest error cells
    // off the index, however many cells (or errors) the table has.
    index("cells_error_recent_idx")
      .on(t.tableId, t.finishedAt.desc().nullsLast())
      .where(sql`${t.status} = 'error'`),
    // A large Stop cancels the unfinished cells of no run (a carrier's auto-run) one by one
    // and the queued cells of runs by scope (cancel_scopes): this finds the former without
    // walking the latter.
    index("cells_unrun_active_idx")
      .on(t.tableId)
      .where(sql`${t.dispatchId} is null and ${t.status} in ('queued', 'running', 'paused')`),
  ],
);

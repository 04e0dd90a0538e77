import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
} from "drizzle-orm/pg-core";
import type { TypedCondition } from "@/domain/where";
import { dispatchStatus, haltReason, runMode } from "./enums";
import { tables } from "./tables";

/** One per Run request; the cursor is the position of the last row handed to a carrier. */
export const dispatches = pgTable(
  "dispatches",
  {
    id: text("id").primaryKey(),
    /**
     * The request's number, drawn from the execution sequence when the run is created (the
     * sequence that numbers Stops): every cell its pages stamp keeps it (`cells.request_seq`),
     * so a Stop's hold compares the Stop with when the request was made, not with when a
     * later page of it stamped.
     */
    seq: bigint("seq", { mode: "number" })
      .notNull()
      .default(sql`nextval('cellflow_execution_seq')`),
    tableId: text("table_id")
      .notNull()
      .references(() => tables.id, { onDelete: "cascade" }),
    groupIds: text("group_ids").array().notNull(),
    mode: runMode("mode").notNull(),
    rowIds: text("row_ids").array(),
    rowLimit: integer("row_limit"),
    window: integer("window").notNull(),
    /** Benchmark only: refill the window only once all of it finished (the peer behaviour). */
    scanline: boolean("scanline").notNull().default(false),
    cursor: bigint("cursor", { mode: "number" }).notNull().default(-1),
    /**
     * No row before this position is in flight: the window counts from here, so each step
     * reads the window's span of the index, not every finished row's dead entries.
     */
    floor: bigint("floor", { mode: "number" }).notNull().default(-1),
    /**
     * The aged cursor (kept by the window step, read by the re-drive): `prevCursor` is the
     * cursor as the step recorded it at `prevCursorAt`, and every row at or before
     * `agedCursor` was handed out at least the queued grace before `prevCursorAt`. So a
     * row at or before `prevCursor` (once `prevCursorAt` is a grace old) or `agedCursor`
     * has waited for its carrier longer than the grace; a row handed out later may still
     * be waiting for a worker slot. A record is taken at most once per grace.
     */
    prevCursor: bigint("prev_cursor", { mode: "number" }).notNull().default(-1),
    prevCursorAt: timestamp("prev_cursor_at", { withTimezone: true }),
    agedCursor: bigint("aged_cursor", { mode: "number" }).notNull().default(-1),
    stamped: integer("stamped").notNull().default(0),
    /** True while a background job is still stamping the rest of a large run. */
    stamping: boolean("stamping").notNull().default(false),
    /**
     * Whether `run_group_cell_counts` holds all of this run's cells: true for every run
     * created after the table and its trigger were (migration `run_group_counts` set it
     * false for the runs before them). A Stop counts the others' cells one by one.
     */
    groupCounted: boolean("group_counted").notNull().default(true),
    /** Position of the last row looked at by stamping (where the background job resumes). */
    stampAfter: bigint("stamp_after", { mode: "number" }).notNull().default(-1),
    /**
     * What scoped Stops took out of this run while it was still stamping: a list of
     * `{ rows, groups }` (either null = all); pages stamped later leave out every cell a
     * Stop covers, so a Stop of some rows or groups holds without ending the run.
     */
    excluded: jsonb("excluded").notNull().default([]),
    /**
     * Auto-fire runs: each group's dependency columns, which must be non-empty for its
     * cell to be stamped (null for a run request, which ignores dependencies). Kept here
     * so the background pages of a large auto-fire apply them too.
     */
    dependsOn: jsonb("depends_on").$type<Record<string, string[]>>(),
    /**
     * The run's row filter (checked `where` conditions, each with its column's type), or
     * null; every stamping page applies it (store/rows/where-sql.ts).
     */
    where: jsonb("where").$type<TypedCondition[]>(),
    /**
     * `resume: true`: error/cancelled cells start again from their last execution's
     * finished blocks. Kept here so the background pages of a large run do the same.
     */
    resume: boolean("resume").notNull().default(false),
    /**
     * Mode `stale`: a completed cell is stale when its attempt ended more than this many
     * hours before the run was created (`created_at`, so every page uses one cut-off).
     */
    staleAfterHours: doublePrecision("stale_after_hours"),
    /** Rows stamped so far (for `limit`). */
    stampedRows: integer("stamped_rows").notNull().default(0),
    /**
     * The run's credit cap, in milli-credits (null: none; the API takes credits with up to
     * three decimals). A paid call of this run is reserved only if what the run is charged
     * or holds reserved (`committedMilli`) plus its estimate stays within it, in the same
     * statement as the monthly cap, so concurrent calls of one run cannot pass it.
     */
    maxCreditsMilli: bigint("max_credits_milli", { mode: "number" }),
    /**
     * Milli-credits this run's calls are charged or hold reserved; kept only when it has a
     * cap (`maxCredits`), which a reservation checks it against under this row's lock. A
     * settle leaves it as it is (a reservation becomes a charge); a release takes it back.
     * What the run was charged is read from the ledger (`usage.dispatch_id`).
     */
    committedMilli: bigint("committed_milli", { mode: "number" }).notNull().default(0),
    /**
     * The run's per-row budget in milli-credits (null: none): a paid call that would take
     * what the row's cells of this run are charged or hold reserved past it is not made,
     * and its cell ends `over_budget`. The run's own `maxCreditsPerRow`, or the table's
     * default when the run was created.
     */
    maxCreditsPerRowMilli: bigint("max_credits_per_row_milli", { mode: "number" }),
    /**
     * The run span's W3C trace context (`traceparent`, null when tracing was off): a
     * carrier in any process, or on trigger.dev, links its trace to it (src/tracing).
     */
    traceContext: text("trace_context"),
    status: dispatchStatus("status").notNull().default("active"),
    /** Set with `status = halted`: which credit limit stopped the run. */
    haltReason: haltReason("halt_reason"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
  },
  (t) => [
    index("dispatches_table_status_idx").on(t.tableId, t.status, t.createdAt),
    index("dispatches_active_idx").on(t.status).where(sql`${t.status} = 'active'`),
    // The run a cell of no run (the cascade after a run's cell) counts in: by request number.
    index("dispatches_table_seq_idx").on(t.tableId, t.seq),
  ],
);

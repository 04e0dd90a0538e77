import { sql } from "drizzle-orm";
import { bigint, boolean, index, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { tables } from "./tables";

/**
 * One per Stop: what it covered. A carrier's auto-run stamp is refused on a row a Stop
 * covers until a run request made after the Stop (an explicit run, an edit's or an
 * insert's auto-fire) stamped one of its cells: `seq` is drawn from the execution
 * sequence, as each request's `dispatches.seq` is when the request is made, so it
 * compares with the `request_seq` the row's cells keep. Kept while anything older than
 * it could still reach its rows (store/stops/prune.ts).
 */
export const stops = pgTable(
  "stops",
  {
    seq: bigint("seq", { mode: "number" })
      .primaryKey()
      .default(sql`nextval('cellflow_execution_seq')`),
    tableId: text("table_id")
      .notNull()
      .references(() => tables.id, { onDelete: "cascade" }),
    /** null: every row (of the dispatch, when one is named). */
    rowIds: text("row_ids").array(),
    /**
     * A Stop with a `where`: the rows it covers are the ones that matched when it was made,
     * recorded in `stop_ranges` (row_ids then narrows nothing further; it is null).
     */
    matched: boolean("matched").notNull().default(false),
    /** null: every group. Auto-run of these groups and of groups downstream of them is held. */
    groupIds: text("group_ids").array(),
    /** The run the Stop named: it covers the rows that have a cell of that run. */
    dispatchId: text("dispatch_id"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("stops_table_seq_idx").on(t.tableId, t.seq)],
);

/**
 * The rows a Stop with a `where` covers (those that matched at the Stop), as ranges of
 * positions: every row of the table whose position is in [lo, hi] matched. Exact, as a
 * row's position never changes and rows are added past every existing position (allotted
 * under the table's row lock, so no row still being added sits below a visible one): no
 * row can later appear inside a range. A `where` matching in blocks is a few ranges
 * however many rows it matched; a scattered one is at worst one range per row.
 */
export const stopRanges = pgTable(
  "stop_ranges",
  {
    seq: bigint("seq", { mode: "number" })
      .notNull()
      .references(() => stops.seq, { onDelete: "cascade" }),
    lo: bigint("lo", { mode: "number" }).notNull(),
    hi: bigint("hi", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.seq, t.lo] })],
);

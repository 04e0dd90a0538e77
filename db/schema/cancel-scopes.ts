import { sql } from "drizzle-orm";
import { bigint, index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { dispatches } from "./dispatches";
import { tables } from "./tables";

/**
 * A large Stop's record of the queued cells it cancelled without rewriting them: one row
 * per run it covers. A cell is covered while it is `queued` under this run (dispatch_id)
 * and matches the groups and rows (null: all; `stop_seq`: the rows a `where` matched, its
 * `stop_ranges`); every read and every writer of cells takes a covered cell as `cancelled`
 * (function `cellflow_covered`, migration `cancel_scopes`). Only the Stop's own run can
 * have queued such a cell: a new run request re-stamps it under its own dispatch id, and
 * the stopped run stamps nothing the Stop covers (`holdStamping`). The rewrite job
 * (store/cells/rewrite-covered.ts) turns covered cells into real `cancelled` ones in
 * batches and deletes the row when none is left.
 */
export const cancelScopes = pgTable(
  "cancel_scopes",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    tableId: text("table_id")
      .notNull()
      .references(() => tables.id, { onDelete: "cascade" }),
    dispatchId: text("dispatch_id")
      .notNull()
      .references(() => dispatches.id, { onDelete: "cascade" }),
    groupIds: text("group_ids").array(),
    rowIds: text("row_ids").array(),
    stopSeq: bigint("stop_seq", { mode: "number" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().default(sql`now()`),
  },
  (t) => [
    index("cancel_scopes_dispatch_idx").on(t.dispatchId),
    index("cancel_scopes_table_idx").on(t.tableId),
  ],
);

import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { deliveryStatus } from "./enums";
import { tables } from "./tables";
import { workspaces } from "./workspaces";

/** Where a table's finished rows are sent (API.md "Schedules, destinations, views"). */
export const destinations = pgTable(
  "destinations",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    tableId: text("table_id")
      .notNull()
      .references(() => tables.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    name: text("name"),
    /** AES-256-GCM ciphertext of the signing secret (security/secret-box). */
    secretCiphertext: text("secret_ciphertext").notNull(),
    enabled: boolean("enabled").notNull().default(true),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("destinations_table_idx").on(t.tableId),
    // The cell-end trigger's probe: does this table have an enabled destination?
    index("destinations_enabled_idx").on(t.tableId).where(sql`${t.enabled}`),
  ],
);

/**
 * The outbox: one entry per (destination, finished row), its body kept as it was sent
 * the first time, so a re-send (after a failure or a lost lease) sends the same bytes
 * under the same id (`Cellflow-Delivery`).
 */
export const destinationDeliveries = pgTable(
  "destination_deliveries",
  {
    id: text("id").primaryKey(),
    destinationId: text("destination_id")
      .notNull()
      .references(() => destinations.id, { onDelete: "cascade" }),
    /** No foreign key: a delivery outlives its row (its body is kept). */
    rowId: text("row_id").notNull(),
    /** Per (destination, row): a row's deliveries go out in this order. */
    seq: integer("seq").notNull(),
    body: jsonb("body").notNull(),
    status: deliveryStatus("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull(),
    /** While set and ahead of now, a sender holds it (in flight); expired: claimable again. */
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    lastError: text("last_error"),
    deliveredAt: timestamp("delivered_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex("destination_deliveries_row_seq_idx").on(t.destinationId, t.rowId, t.seq),
    index("destination_deliveries_pending_idx")
      .on(t.destinationId, t.nextAttemptAt)
      .where(sql`${t.status} = 'pending'`),
    // The claim's in-flight count (leases ahead of now): read here, not over the backlog.
    index("destination_deliveries_lease_idx")
      .on(t.destinationId, t.leaseUntil)
      .where(sql`${t.status} = 'pending' and ${t.leaseUntil} is not null`),
    index("destination_deliveries_list_idx").on(t.destinationId, t.createdAt, t.id),
    index("destination_deliveries_delivered_idx")
      .on(t.deliveredAt)
      .where(sql`${t.status} = 'delivered'`),
    index("destination_deliveries_failed_idx").on(t.createdAt).where(sql`${t.status} = 'failed'`),
  ],
);

/**
 * "Row R may be finished": appended by the cell-end trigger (migration
 * `destination_marks_trigger`) in the transaction that ends a cell, read and deleted by
 * the drainer (store/destinations/drain-marks.ts). Append-only with no unique key, so a
 * cell's end never waits on another transaction's mark.
 */
export const destinationMarks = pgTable("destination_marks", {
  id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
  tableId: text("table_id").notNull(),
  rowId: text("row_id").notNull(),
  dispatchId: text("dispatch_id"),
});

import { index, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { tables } from "./tables";
import { workspaces } from "./workspaces";

/**
 * A table's named filter, sort and hidden columns, shared by its workspace. The where,
 * order and hidden columns are stored as given; a column deleted since then is found when
 * the view is read (409), not cascaded here.
 */
export const savedViews = pgTable(
  "saved_views",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    tableId: text("table_id")
      .notNull()
      .references(() => tables.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** The `Where` conditions as sent (contracts/where.ts); null: no filter. */
    where: jsonb("where"),
    /** A column id; null: the row position order. */
    orderBy: text("order_by"),
    dir: text("dir").notNull().default("asc"),
    hiddenColumns: jsonb("hidden_columns").notNull().default([]),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("saved_views_table_idx").on(t.tableId)],
);

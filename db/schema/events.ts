import { bigserial, index, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { eventKind } from "./enums";
import { tables } from "./tables";

/** Append-only, written in the transaction of the change it describes. */
export const events = pgTable(
  "events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    tableId: text("table_id")
      .notNull()
      .references(() => tables.id, { onDelete: "cascade" }),
    kind: eventKind("kind").notNull(),
    data: jsonb("data").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("events_table_id_idx").on(t.tableId, t.id),
    index("events_created_idx").on(t.createdAt),
  ],
);

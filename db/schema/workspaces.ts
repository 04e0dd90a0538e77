import { bigint, date, index, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { plan } from "./enums";

export const workspaces = pgTable("workspaces", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  plan: plan("plan").notNull().default("free"),
  /**
   * Milli-credits charged in `creditsMonth` (the first day of a UTC month): a settle adds
   * to it in the transaction that records the answer. With `reservedMilli` (credits set
   * aside for calls in flight, whatever the month) it is what the month's cap is checked
   * against, in one conditional UPDATE of this row, so concurrent calls never overspend.
   * The usage ledger holds the detail.
   */
  usedMilli: bigint("used_milli", { mode: "number" }).notNull().default(0),
  reservedMilli: bigint("reserved_milli", { mode: "number" }).notNull().default(0),
  creditsMonth: date("credits_month", { mode: "string" }),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

/** Only a SHA-256 of each key is stored; the prefix lets a person tell keys apart. */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    prefix: text("prefix").notNull(),
    hash: text("hash").notNull(),
    label: text("label"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("api_keys_hash_idx").on(t.hash),
    index("api_keys_workspace_idx").on(t.workspaceId),
  ],
);

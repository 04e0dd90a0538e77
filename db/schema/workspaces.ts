import { date, index, integer, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { plan } from "./enums";

export const workspaces = pgTable("workspaces", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  plan: plan("plan").notNull().default("free"),
  /**
   * Credits charged in `creditsMonth` (the first day of a UTC month). Admission moves it
   * with one conditional UPDATE, so concurrent attempts can never overspend; the usage
   * ledger holds the detail.
   */
  creditsUsed: integer("credits_used").notNull().default(0),
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

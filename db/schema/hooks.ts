import { index, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { hookAction } from "./enums";
import { tables } from "./tables";
import { workspaces } from "./workspaces";

export const hooks = pgTable(
  "hooks",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    tableId: text("table_id")
      .notNull()
      .references(() => tables.id, { onDelete: "cascade" }),
    action: hookAction("action").notNull(),
    /** AES-256-GCM ciphertext of the signing secret (iv.tag.data, base64). */
    secretCiphertext: text("secret_ciphertext").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [index("hooks_table_idx").on(t.tableId)],
);

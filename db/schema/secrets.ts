import { pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { workspaces } from "./workspaces";

/**
 * Workspace secrets (`secrets.NAME` in expressions, LLM_API_KEY for llm blocks). Only the
 * sealed form is stored: AES-256-GCM under CELLFLOW_SECRET_KEY, "iv.tag.data" in base64.
 */
export const secrets = pgTable(
  "secrets",
  {
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    ciphertext: text("ciphertext").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.name] })],
);

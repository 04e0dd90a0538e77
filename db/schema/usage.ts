import {
  bigserial,
  index,
  integer,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { workspaces } from "./workspaces";

/** Ledger of charges; the unique (execution_id, source) makes retries free. */
export const usage = pgTable(
  "usage",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    executionId: text("execution_id").notNull(),
    source: text("source").notNull(),
    credits: integer("credits").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("usage_execution_source_idx").on(t.executionId, t.source),
    index("usage_workspace_created_idx").on(t.workspaceId, t.createdAt),
  ],
);

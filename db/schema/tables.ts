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
import { workspaces } from "./workspaces";

export const tables = pgTable(
  "tables",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** `{ columns, groups }`, validated by contracts/table.ts and domain/table-schema.ts. */
    schema: jsonb("schema").notNull(),
    schemaVersion: integer("schema_version").notNull().default(1),
    /**
     * The auto-run switch: off, no group fires by itself (inserts, edits, imports, insert
     * webhooks, the carrier's cascade); read by the statements that stamp those.
     */
    autoRun: boolean("auto_run").notNull().default(true),
    /**
     * The default per-row budget in milli-credits (null: none), taken by each run created
     * without its own (explicit or auto-fired), and by a cell that belongs to no run.
     */
    maxCreditsPerRowMilli: bigint("max_credits_per_row_milli", { mode: "number" }),
    /** Next row position; bumped in the same statement that inserts rows. */
    nextPosition: bigint("next_position", { mode: "number" }).notNull().default(0),
    /**
     * The table's rows, moved in the statement that allots positions (store/rows/insert.ts,
     * which also holds it under the plan's cap) and in each row delete; what listings and
     * the cap read instead of counting.
     */
    rowCount: bigint("row_count", { mode: "number" }).notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("tables_workspace_idx").on(t.workspaceId, t.createdAt)],
);

export const rows = pgTable(
  "rows",
  {
    id: text("id").primaryKey(),
    tableId: text("table_id")
      .notNull()
      .references(() => tables.id, { onDelete: "cascade" }),
    position: bigint("position", { mode: "number" }).notNull(),
    /** Values keyed by column id, outputs of groups included. */
    data: jsonb("data").notNull().default({}),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("rows_table_position_idx").on(t.tableId, t.position)],
);

import { index, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { dispatches } from "./dispatches";
import { tables } from "./tables";

/**
 * The `Idempotency-Key`s of run requests (`POST /runs`, run webhooks), per table: the run
 * each key started and the digest of the request it came with. Written in the transaction
 * that creates the run, so a key is recorded if and only if its run exists; a second
 * request with the key waits on the first's uncommitted row (the primary key) and then
 * answers its run. Kept 24 h (pruned by the maintenance job, ignored once older).
 */
export const runKeys = pgTable(
  "run_keys",
  {
    tableId: text("table_id")
      .notNull()
      .references(() => tables.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** SHA-256 (hex) of the validated request in canonical JSON (domain/request-digest.ts). */
    requestDigest: text("request_digest").notNull(),
    dispatchId: text("dispatch_id")
      .notNull()
      .references(() => dispatches.id, { onDelete: "cascade" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "run_keys_pkey", columns: [t.tableId, t.key] }),
    index("run_keys_created_idx").on(t.createdAt),
    // A discarded dispatch (an auto-fire that found nothing) is deleted: its FK check reads here.
    index("run_keys_dispatch_idx").on(t.dispatchId),
  ],
);

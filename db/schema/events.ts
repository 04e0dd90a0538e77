import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  index,
  jsonb,
  pgSequence,
  pgTable,
  text,
  timestamp,
} from "drizzle-orm/pg-core";
import { eventKind } from "./enums";
import { tables } from "./tables";

/**
 * Stream positions, handed out in commit order by store/events/sequence.ts. The insert
 * id cannot serve as a cursor: ids are drawn before commit, so a later id can become
 * visible before an earlier one, and a reader that moved past it would lose the event.
 */
export const eventSeq = pgSequence("event_seq");

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
    /** The stream position (the SSE id); null until sequenced. */
    seq: bigint("seq", { mode: "number" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  // No (table_id, id) index: no reader needs one (the sequencer's `seq is null order by
  // id` is the partial index's, a table's cascade delete and every read by table go by
  // (table_id, seq)), and it cost every event insert an index entry (migration
  // `drop_events_table_id_idx`).
  (t) => [
    index("events_created_idx").on(t.createdAt),
    index("events_table_seq_idx").on(t.tableId, t.seq),
    index("events_unsequenced_idx").on(t.tableId, t.id).where(sql`${t.seq} is null`),
  ],
);

/**
 * Per table, the highest stream position pruning has deleted of its events (written by
 * the pruning statement itself): a stream's cursor below it asks for events that are
 * gone, so the stream sends `reset`. Read instead of `min(seq)` over every event, which
 * no index answers (events are indexed by table first), and per table because positions
 * are global: a table whose backlog was sequenced late, or deleted, moves no other
 * table's history. No foreign key: pruning would then lock the table's row after its
 * events, the opposite order of a table's deletion; marks of deleted tables are removed
 * by the next pruning pass.
 */
export const eventsPruned = pgTable("events_pruned", {
  tableId: text("table_id").primaryKey(),
  throughSeq: bigint("through_seq", { mode: "number" }).notNull(),
});

import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  check,
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
 * The highest stream position pruning has deleted (one row, written by the pruning
 * statement itself): a stream's cursor below it asks for events that are gone, so the
 * stream sends `reset`. Read instead of `min(seq)` over every event, which no index
 * answers (events are indexed by table first) and which a table's deletion would move.
 */
export const eventsPruned = pgTable(
  "events_pruned",
  {
    one: boolean("one").primaryKey().default(true),
    throughSeq: bigint("through_seq", { mode: "number" }).notNull().default(0),
  },
  (t) => [check("events_pruned_one_row", sql`${t.one}`)],
);

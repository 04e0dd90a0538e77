/**
 * Gives committed, unsequenced events of a table their stream positions. Invariant: per
 * table, positions become visible in increasing order, so a reader that has seen position
 * p never later finds a committed event below p. The table's advisory lock serializes
 * sequencers, and the UPDATE runs on a snapshot taken after the lock was granted (second
 * statement of the transaction): it sees every event committed before, and the next
 * sequencer sees its assignments.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

/**
 * Sequence transactions this process ran: each queues on the table's lock and holds a
 * pooled connection meanwhile, so tests and the load script check that it does not grow
 * with the number of streams.
 */
export const sequenceStats = { transactions: 0 };

export async function sequenceEvents(db: Db, tableId: string): Promise<number> {
  sequenceStats.transactions++;
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`select pg_advisory_xact_lock(hashtextextended(${`events:${tableId}`}, 0))`,
    );
    const [row] = await queryRows<{ n: number }>(
      tx,
      sql`with todo as (select id from events where table_id = ${tableId} and seq is null order by id),
          upd as (
            update events e set seq = nextval('event_seq')
              from todo where e.id = todo.id and e.seq is null
            returning 1
          )
          select count(*)::int as n from upd`,
    );
    return row?.n ?? 0;
  });
}

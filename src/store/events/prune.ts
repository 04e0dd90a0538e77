import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

/**
 * Deletes events older than `hours`, in batches so no statement runs long; returns how
 * many. Each batch raises the pruned mark (`events_pruned`) to the highest position it
 * deleted, in its own statement: a stream that reads the mark never misses a deletion
 * that committed before its read (streams send `reset` to a cursor below it).
 */
export async function pruneEvents(db: Db, hours: number): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await queryRows<{ n: number }>(
      db,
      sql`with doomed as (
            select id from events where created_at < now() - make_interval(hours => ${hours}) order by id limit 10000
          ), del as (delete from events e using doomed d where e.id = d.id returning e.seq),
          mark as (
            insert into events_pruned (one, through_seq)
            select true, max(seq) from del having max(seq) is not null
            on conflict (one) do update
              set through_seq = greatest(events_pruned.through_seq, excluded.through_seq))
          select count(*)::int as n from del`,
    );
    total += row?.n ?? 0;
    if ((row?.n ?? 0) < 10_000) return total;
  }
}

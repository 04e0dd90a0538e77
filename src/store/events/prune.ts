import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

/**
 * Deletes events older than `hours`, in batches so no statement runs long; returns how
 * many. Each batch raises its tables' pruned marks (`events_pruned`) to the highest
 * position it deleted of each, in the same statement: a stream that reads a mark never
 * misses a deletion that committed before its read (streams send `reset` to a cursor
 * below it). Then the marks of tables deleted since go.
 */
export async function pruneEvents(db: Db, hours: number): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await queryRows<{ n: number }>(
      db,
      sql`with doomed as (
            select id from events where created_at < now() - make_interval(hours => ${hours}) order by id limit 10000
          ), del as (delete from events e using doomed d where e.id = d.id returning e.table_id, e.seq),
          mark as (
            insert into events_pruned (table_id, through_seq)
            select table_id, max(seq) from del where seq is not null group by table_id
            on conflict (table_id) do update
              set through_seq = greatest(events_pruned.through_seq, excluded.through_seq))
          select count(*)::int as n from del`,
    );
    total += row?.n ?? 0;
    if ((row?.n ?? 0) < 10_000) break;
  }
  await db.execute(
    sql`delete from events_pruned p where not exists (select 1 from tables t where t.id = p.table_id)`,
  );
  return total;
}

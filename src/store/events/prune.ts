import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

/** Deletes events older than `hours`, in batches so no statement runs long; returns how many. */
export async function pruneEvents(db: Db, hours: number): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await queryRows<{ n: number }>(
      db,
      sql`with doomed as (
            select id from events where created_at < now() - make_interval(hours => ${hours}) order by id limit 10000
          ), del as (delete from events e using doomed d where e.id = d.id returning 1)
          select count(*)::int as n from del`,
    );
    total += row?.n ?? 0;
    if ((row?.n ?? 0) < 10_000) return total;
  }
}

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

/**
 * Stop records only matter while a carrier that started before the Stop could still
 * reach its rows (seconds; a job left waiting in a queue, hours at most): anything that
 * comes later to a row comes with a run request, which is newer than the Stop anyway.
 * Deletes records older than `hours`; returns how many.
 */
export async function pruneStops(db: Db, hours = 24): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`with del as (delete from stops where created_at < now() - make_interval(hours => ${hours}) returning 1)
        select count(*)::int as n from del`,
  );
  return row?.n ?? 0;
}

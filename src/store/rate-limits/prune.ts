import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

/**
 * Deletes the sliding logs of keys with no grant for `olderThanHours` (a workspace that
 * stopped calling a provider, a limit that changed and so changed the key). Safe against
 * a take of the same key: the delete re-checks its condition on the row it locks, so a
 * grant committed meanwhile keeps the log; a take that finds the row gone starts a new
 * one, which is right, since no grant of the old one is inside any window (windows are
 * far shorter than the age). Cool-downs that ended as long ago go too (a cool-down
 * raised meanwhile is kept by the same re-check). Returns how many rows of either.
 */
export async function pruneRateLimitLogs(db: Db, olderThanHours = 24): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`with del as (
          delete from rate_limit_logs
           where coalesce(grants[array_upper(grants, 1)], 0)
                 < (extract(epoch from now()) * 1000)::bigint - ${olderThanHours}::bigint * 3600000
          returning 1),
        cool as (
          delete from rate_limit_cool_downs
           where until_ms < (extract(epoch from now()) * 1000)::bigint - ${olderThanHours}::bigint * 3600000
          returning 1)
        select ((select count(*) from del) + (select count(*) from cool))::int as n`,
  );
  return row?.n ?? 0;
}

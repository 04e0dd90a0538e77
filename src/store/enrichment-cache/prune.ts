/**
 * Old enrichment cache entries: answers past the TTL (all of them when the cache is off),
 * and claims a day old (their holders died; a live claim is minutes old at most).
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

export async function pruneEnrichmentCache(db: Db, ttlHours: number): Promise<number> {
  const rows = await queryRows<{ one: number }>(
    db,
    sql`delete from enrichment_cache
         where filled_at < now() - make_interval(hours => ${ttlHours})
            or (filled_at is null and claimed_at < now() - interval '1 day')
        returning 1 as one`,
  );
  return rows.length;
}

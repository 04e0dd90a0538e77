import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

/** Delivered entries are kept this long (API.md); failed and pending ones until deleted. */
export const DELIVERED_RETENTION_DAYS = 7;

/** Deletes delivered entries older than the retention, in batches; returns how many. */
export async function pruneDestinationDeliveries(db: Db, now: Date = new Date()): Promise<number> {
  const before = new Date(now.getTime() - DELIVERED_RETENTION_DAYS * 86_400_000).toISOString();
  let total = 0;
  for (;;) {
    const [row] = await queryRows<{ n: number }>(
      db,
      sql`with doomed as (
            select id from destination_deliveries
             where status = 'delivered' and delivered_at < ${before}::timestamptz
             limit 10000
          ), del as (
            delete from destination_deliveries d using doomed x where d.id = x.id returning 1
          )
          select count(*)::int as n from del`,
    );
    total += row?.n ?? 0;
    if ((row?.n ?? 0) < 10_000) return total;
  }
}

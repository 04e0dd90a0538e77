import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

/**
 * Deletes deliveries older than `minutes`, in batches; returns how many. A delivery can
 * only be replayed while its `t` is within the signature tolerance (±300 s), so keeping
 * an hour covers every replay that could still verify, with room for clock skew.
 */
export async function pruneHookDeliveries(db: Db, minutes = 60): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await queryRows<{ n: number }>(
      db,
      sql`with doomed as (
            select hook_id, signature_digest from hook_deliveries
             where created_at < now() - make_interval(mins => ${minutes})
             limit 10000
          ), del as (
            delete from hook_deliveries d using doomed x
             where d.hook_id = x.hook_id and d.signature_digest = x.signature_digest
            returning 1
          )
          select count(*)::int as n from del`,
    );
    total += row?.n ?? 0;
    if ((row?.n ?? 0) < 10_000) return total;
  }
}

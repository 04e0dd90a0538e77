import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { RUN_KEY_HOURS } from "./find";

/**
 * Deletes run keys past their 24 h, in batches; returns how many. They are no longer
 * honoured anyway (find.ts reads only younger ones): this only keeps the table small.
 */
export async function pruneRunKeys(db: Db): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await queryRows<{ n: number }>(
      db,
      sql`with doomed as (
            select table_id, key from run_keys
             where created_at <= now() - make_interval(hours => ${RUN_KEY_HOURS})
             limit 10000
          ), del as (
            delete from run_keys k using doomed x
             where k.table_id = x.table_id and k.key = x.key
            returning 1
          )
          select count(*)::int as n from del`,
    );
    total += row?.n ?? 0;
    if ((row?.n ?? 0) < 10_000) return total;
  }
}

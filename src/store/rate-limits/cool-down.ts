/**
 * Cools a key for every process (a provider's 429): no weighted take on it gets a slot
 * before `ms` from now, on the database's clock. Invariant: a cool-down only ever grows;
 * the guard keeps a longer one already set.
 */

import type { Db } from "@db/client";
import { sql } from "drizzle-orm";

export async function coolDownKey(db: Db, key: string, ms: number): Promise<void> {
  await db.execute(
    sql`insert into rate_limit_cool_downs (key, until_ms)
        values (${key}, floor(extract(epoch from clock_timestamp()) * 1000)::bigint + ${Math.round(ms)}::bigint)
        on conflict (key) do update set until_ms = excluded.until_ms
         where rate_limit_cool_downs.until_ms < excluded.until_ms`,
  );
}

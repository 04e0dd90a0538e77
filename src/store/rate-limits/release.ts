/**
 * Gives a reserved slot back to a key's sliding log in Postgres: removes one entry at
 * `atMs` (two calls may share a millisecond at high rates; one entry is one call).
 * Invariant: only ever removes an entry whose call will not be made, so the log never
 * counts fewer calls than went out; the update re-reads the row it locks, so a take
 * committed meanwhile is kept.
 */

import type { Db } from "@db/client";
import { sql } from "drizzle-orm";

export async function releaseSlot(db: Db, key: string, atMs: number): Promise<void> {
  await db.execute(
    sql`update rate_limit_logs
           set grants = grants[:array_position(grants, ${atMs}::bigint) - 1]
                     || grants[array_position(grants, ${atMs}::bigint) + 1:]
         where key = ${key} and grants @> array[${atMs}::bigint]`,
  );
}

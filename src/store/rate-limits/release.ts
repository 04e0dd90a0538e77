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

/**
 * Gives a reserved entry back to a key's weighted log: removes one entry at `atMs` that
 * weighs `weight`, from both arrays at once (found on the row the update locks).
 */
export async function releaseWeightedSlot(
  db: Db,
  key: string,
  atMs: number,
  weight: number,
): Promise<void> {
  const at = sql`cellflow_rate_entry(grants, weights, ${atMs}::bigint, ${weight}::int)`;
  await db.execute(
    sql`update rate_limit_logs
           set grants = grants[:${at} - 1] || grants[${at} + 1:],
               weights = weights[:${at} - 1] || weights[${at} + 1:]
         where key = ${key} and ${at} is not null`,
  );
}

/**
 * Settles an entry of a key's weighted log in Postgres: the entry (at, reserved weight)
 * weighs what its call used from now on. Invariants: the entry is found on the row the
 * update locks (a take committed meanwhile, which may have dropped expired entries and so
 * moved it, is seen); one entry changes, and entries alike (same slot, same weight) are
 * interchangeable, so settling either is the same log; an entry already gone (out of the
 * window, given back) changes nothing.
 */

import type { Db } from "@db/client";
import { sql } from "drizzle-orm";

export async function settleEntry(
  db: Db,
  key: string,
  atMs: number,
  reserved: number,
  used: number,
): Promise<void> {
  const at = sql`cellflow_rate_entry(grants, weights, ${atMs}::bigint, ${reserved}::int)`;
  await db.execute(
    sql`update rate_limit_logs
           set weights = weights[:${at} - 1] || ${used}::int || weights[${at} + 1:]
         where key = ${key} and ${at} is not null`,
  );
}

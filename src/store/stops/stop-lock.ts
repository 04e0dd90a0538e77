/**
 * The table's stop lock: a transaction-level advisory lock a Stop takes exclusively
 * before anything else, and a carrier's auto-run stamp takes shared in a statement of its
 * own before it stamps. So a stamp either commits before the Stop reads cells (and is
 * cancelled by it) or takes its snapshot after the Stop committed (and sees its record).
 */
import { createHash } from "node:crypto";
import type { Db } from "@db/client";
import { sql } from "drizzle-orm";

function stopLockKey(tableId: string): string {
  const digest = createHash("sha256").update(`stop:${tableId}`).digest();
  return digest.readBigInt64BE(0).toString();
}

export async function lockForStop(db: Db, tableId: string): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(${stopLockKey(tableId)}::bigint)`);
}

export async function lockAgainstStop(db: Db, tableId: string): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock_shared(${stopLockKey(tableId)}::bigint)`);
}

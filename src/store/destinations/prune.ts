/**
 * The outbox's retention (API.md): delivered entries go 7 days after delivery, failed
 * ones 30 days after they were made (a failure comes at most a day after that), pending
 * ones never. Deleting an entry never reorders a row's later deliveries: a new one is
 * numbered after the highest `seq` left, and only pending entries hold later ones back.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";

export const DELIVERED_RETENTION_DAYS = 7;
export const FAILED_RETENTION_DAYS = 30;

const DAY_MS = 86_400_000;
const BATCH = 10_000;

/** Deletes delivered and failed entries past their retention, in batches; returns how many. */
export async function pruneDestinationDeliveries(db: Db, now: Date = new Date()): Promise<number> {
  const delivered = new Date(now.getTime() - DELIVERED_RETENTION_DAYS * DAY_MS).toISOString();
  const failed = new Date(now.getTime() - FAILED_RETENTION_DAYS * DAY_MS).toISOString();
  return (
    (await pruneWhere(db, sql`status = 'delivered' and delivered_at < ${delivered}::timestamptz`)) +
    (await pruneWhere(db, sql`status = 'failed' and created_at < ${failed}::timestamptz`))
  );
}

async function pruneWhere(db: Db, where: SQL): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await queryRows<{ n: number }>(
      db,
      sql`with doomed as (
            select id from destination_deliveries where ${where} limit ${BATCH}
          ), del as (
            delete from destination_deliveries d using doomed x where d.id = x.id returning 1
          )
          select count(*)::int as n from del`,
    );
    total += row?.n ?? 0;
    if ((row?.n ?? 0) < BATCH) return total;
  }
}

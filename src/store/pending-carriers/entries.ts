/**
 * Pending carrier runs (table `pending_carriers`), the trigger.dev backend's fold of
 * duplicate carriers. Guarantees: `claimPendingCarriers` gives a row a fresh entry only
 * where it has none, or a stale one, or one for another dispatch, in one statement that
 * concurrent enqueues of the same row serialise on (the primary key): of two enqueues
 * racing for a row, one triggers and the other folds. `clearPendingCarrier` deletes a
 * run's own entry only, so a run that started late never clears a newer run's entry.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

export interface PendingCarrier {
  rowId: string;
  tableId: string;
  dispatchId?: string;
  /** A fresh key per claim: part of the run's idempotency key, and in its payload. */
  runKey: string;
}

/**
 * Writes entries for rows without a live one; returns the row ids that got theirs (the
 * runs to trigger). Every other row has a run queued and not started: the caller folds.
 * Row ids must be distinct (one statement cannot update a row twice).
 */
export async function claimPendingCarriers(
  db: Db,
  entries: readonly PendingCarrier[],
  staleMs: number,
): Promise<Set<string>> {
  if (entries.length === 0) return new Set();
  const rows = await queryRows<{ rowId: string }>(
    db,
    sql`insert into pending_carriers (row_id, table_id, dispatch_id, run_key)
        select e.row_id, e.table_id, e.dispatch_id, e.run_key
          from jsonb_to_recordset(${JSON.stringify(
            entries.map((e) => ({
              row_id: e.rowId,
              table_id: e.tableId,
              dispatch_id: e.dispatchId ?? null,
              run_key: e.runKey,
            })),
          )}::jsonb) as e(row_id text, table_id text, dispatch_id text, run_key text)
        on conflict (row_id) do update
           set table_id = excluded.table_id, dispatch_id = excluded.dispatch_id,
               run_key = excluded.run_key, enqueued_at = now()
         where pending_carriers.enqueued_at < now() - make_interval(secs => ${staleMs / 1000})
            or (excluded.dispatch_id is not null
                and pending_carriers.dispatch_id is distinct from excluded.dispatch_id)
        returning row_id as "rowId"`,
  );
  return new Set(rows.map((r) => r.rowId));
}

/** Takes back entries whose runs were never triggered (the trigger call failed). */
export async function dropPendingCarriers(
  db: Db,
  entries: readonly Pick<PendingCarrier, "rowId" | "runKey">[],
): Promise<void> {
  if (entries.length === 0) return;
  await db.execute(
    sql`delete from pending_carriers p
         using jsonb_to_recordset(${JSON.stringify(
           entries.map((e) => ({ row_id: e.rowId, run_key: e.runKey })),
         )}::jsonb) as e(row_id text, run_key text)
         where p.row_id = e.row_id and p.run_key = e.run_key`,
  );
}

/** The run triggered for `runKey` has started: later enqueues of the row start new runs. */
export async function clearPendingCarrier(
  db: Db,
  entry: Pick<PendingCarrier, "rowId" | "runKey">,
): Promise<void> {
  await db.execute(
    sql`delete from pending_carriers where row_id = ${entry.rowId} and run_key = ${entry.runKey}`,
  );
}

/**
 * Deletes entries older than `olderThanHours`: past the fold's staleness bound an entry
 * folds nothing (the next enqueue of its row replaces it), so an old one only remains
 * when its row never got another enqueue (deleted, or finished by another run). Returns
 * how many.
 */
export async function prunePendingCarriers(db: Db, olderThanHours = 24): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`with del as (
          delete from pending_carriers
           where enqueued_at < now() - make_interval(hours => ${olderThanHours})
          returning 1)
        select count(*)::int as n from del`,
  );
  return row?.n ?? 0;
}

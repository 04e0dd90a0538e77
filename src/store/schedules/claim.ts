/**
 * A schedule's due time, taken once. Invariant: the due time a scheduler saw (`seen`)
 * moves to the next one in one guarded UPDATE (same id, same due time, still due, still
 * enabled, still the cron and zone the next one was computed from, so a PATCH that changed
 * them but kept the due time is not undone by a next time of the old cron), inside the
 * transaction that then creates the run (services/schedule-fire.ts): of two schedulers
 * that saw the same due time, the second waits for the first's row lock, finds the due
 * time moved and gets null, so one due time starts at most one run, and a run that failed
 * to be created rolls the due time back with it. A due time whose last run is still
 * active is taken too, recorded as skipped (`last_skipped_at`, `skipped`), and starts
 * nothing. The next due time is computed from now by the caller, so after downtime one
 * run catches up, not one per missed time; one not after now is refused (null), since it
 * would be due again at once and fire every pass. Moving the due time moves `version`, so
 * a PATCH that read the schedule before the move writes nothing and merges again
 * (store/schedules/update.ts): it never puts back a due time already taken.
 */
import { type Db, queryRows } from "@db/client";
import { sql } from "drizzle-orm";

export interface ClaimedSchedule {
  tableId: string;
  run: unknown;
  /** The schedule's last run is still active: this due time was skipped. */
  busy: boolean;
}

export async function claimDueSchedule(
  db: Db,
  due: { id: string; seen: string; cron: string; timezone: string; now: Date; next: Date },
): Promise<ClaimedSchedule | null> {
  const now = due.now.toISOString();
  const [row] = await queryRows<ClaimedSchedule>(
    db,
    sql`with cur as (
          select s.id,
                 exists (select 1 from dispatches d
                          where d.id = s.last_dispatch_id and d.status = 'active') as busy
            from schedules s
           where s.id = ${due.id} and s.enabled
             and s.next_run_at = ${due.seen}::timestamptz
             and s.cron = ${due.cron} and s.timezone = ${due.timezone}
             and s.next_run_at <= ${now}::timestamptz
             and ${due.next.toISOString()}::timestamptz > ${now}::timestamptz
           for update of s
        )
        update schedules s
           set next_run_at = ${due.next.toISOString()}::timestamptz, updated_at = now(),
               version = s.version + 1,
               last_skipped_at = case when cur.busy then ${now}::timestamptz else s.last_skipped_at end,
               skipped = s.skipped + case when cur.busy then 1 else 0 end
          from cur
         where s.id = cur.id
        returning s.table_id as "tableId", s.run, cur.busy`,
  );
  return row ?? null;
}

/** The run a due time started: in the claim's transaction, so both commit or neither. */
export async function recordScheduledRun(
  db: Db,
  run: { id: string; dispatchId: string; now: Date },
): Promise<void> {
  await queryRows(
    db,
    sql`update schedules set last_run_at = ${run.now.toISOString()}::timestamptz,
               last_dispatch_id = ${run.dispatchId}, last_error = null, updated_at = now()
         where id = ${run.id}`,
  );
}

/** Why a due time (already taken) started no run: the request no longer fits the table. */
export async function recordScheduleError(
  db: Db,
  failed: { id: string; message: string },
): Promise<void> {
  await queryRows(
    db,
    sql`update schedules set last_error = ${failed.message}, updated_at = now() where id = ${failed.id}`,
  );
}

/**
 * A due time that threw (its run, or its next time): moved on to `next` with the reason,
 * under the claim's guards (same due time, cron and zone, still due, still enabled, next
 * after now), so a due time another scheduler took or an edit moved is left alone.
 */
export async function failDueTime(
  db: Db,
  failed: {
    id: string;
    seen: string;
    cron: string;
    timezone: string;
    now: Date;
    next: Date;
    message: string;
  },
): Promise<void> {
  const now = failed.now.toISOString();
  await queryRows(
    db,
    sql`update schedules set next_run_at = ${failed.next.toISOString()}::timestamptz,
               version = version + 1, last_error = ${failed.message}, updated_at = now()
         where id = ${failed.id} and enabled
           and next_run_at = ${failed.seen}::timestamptz
           and cron = ${failed.cron} and timezone = ${failed.timezone}
           and next_run_at <= ${now}::timestamptz
           and ${failed.next.toISOString()}::timestamptz > ${now}::timestamptz`,
  );
}

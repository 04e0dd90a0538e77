/**
 * Reads of a table's schedules, scoped to the workspace: another workspace's schedule
 * reads as absent. `dueSchedules` is the scheduler's look (any workspace).
 */
import { type Db, queryRows } from "@db/client";
import { schedules } from "@db/schema";
import { and, asc, eq, sql } from "drizzle-orm";

/** A schedule as the API shows it: its row without the workspace (the scope of every read). */
export type ScheduleRecord = Omit<typeof schedules.$inferSelect, "workspaceId">;

export const scheduleColumns = {
  id: schedules.id,
  tableId: schedules.tableId,
  cron: schedules.cron,
  timezone: schedules.timezone,
  enabled: schedules.enabled,
  run: schedules.run,
  nextRunAt: schedules.nextRunAt,
  lastRunAt: schedules.lastRunAt,
  lastDispatchId: schedules.lastDispatchId,
  lastSkippedAt: schedules.lastSkippedAt,
  skipped: schedules.skipped,
  lastError: schedules.lastError,
  version: schedules.version,
  createdAt: schedules.createdAt,
  updatedAt: schedules.updatedAt,
};

export async function listSchedules(
  db: Db,
  workspaceId: string,
  tableId: string,
): Promise<ScheduleRecord[]> {
  return db
    .select(scheduleColumns)
    .from(schedules)
    .where(and(eq(schedules.workspaceId, workspaceId), eq(schedules.tableId, tableId)))
    .orderBy(asc(schedules.createdAt), asc(schedules.id));
}

export async function getSchedule(
  db: Db,
  target: { workspaceId: string; tableId: string; scheduleId: string },
): Promise<ScheduleRecord | null> {
  const [row] = await db
    .select(scheduleColumns)
    .from(schedules)
    .where(
      and(
        eq(schedules.id, target.scheduleId),
        eq(schedules.tableId, target.tableId),
        eq(schedules.workspaceId, target.workspaceId),
      ),
    )
    .limit(1);
  return row ?? null;
}

/** A due schedule as the scheduler saw it: `seen` is its due time, exactly as stored. */
export interface DueSchedule {
  id: string;
  cron: string;
  timezone: string;
  seen: string;
}

/** Enabled schedules due at `now` (oldest due first), at most `limit`. */
export async function dueSchedules(db: Db, now: Date, limit: number): Promise<DueSchedule[]> {
  return queryRows<DueSchedule>(
    db,
    sql`select id, cron, timezone, next_run_at::text as seen from schedules
         where enabled and next_run_at <= ${now.toISOString()}::timestamptz
         order by next_run_at limit ${limit}`,
  );
}

/**
 * Edits a schedule: the fields given replace the stored ones. Scoped in its WHERE to the
 * workspace and table, so another workspace's schedule is never touched (null: not found).
 * A new cron or zone, or a switch back on, comes with its next due time, computed from now
 * by the caller, so a schedule switched back on does not fire for the times it was off;
 * other edits keep the due time (one not yet fired still fires).
 */
import type { Db } from "@db/client";
import { schedules } from "@db/schema";
import { and, eq, sql } from "drizzle-orm";
import { type ScheduleRecord, scheduleColumns } from "./read";

export interface ScheduleChange {
  cron?: string;
  timezone?: string;
  enabled?: boolean;
  run?: Record<string, unknown>;
  nextRunAt?: Date;
}

export async function updateSchedule(
  db: Db,
  target: { workspaceId: string; tableId: string; scheduleId: string },
  change: ScheduleChange,
): Promise<ScheduleRecord | null> {
  const [row] = await db
    .update(schedules)
    .set({ ...change, updatedAt: sql`now()` })
    .where(
      and(
        eq(schedules.id, target.scheduleId),
        eq(schedules.tableId, target.tableId),
        eq(schedules.workspaceId, target.workspaceId),
      ),
    )
    .returning(scheduleColumns);
  return row ?? null;
}

/**
 * Edits a schedule: the fields given replace the stored ones. Invariant: an edit is written
 * only over the schedule as it was read — the UPDATE's WHERE carries the `version` the
 * caller merged from (besides the workspace and table, so another workspace's schedule is
 * never touched), and every write of what a merge reads moves it (this one, and the
 * scheduler's due-time moves in claim.ts). So of two edits merged from one version only
 * the first is written; the second finds no row (`changed`) and must merge again from a
 * fresh read, never overwrite the first's fields; and an edit merged before the scheduler
 * took a due time never puts back that due time.
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

export type ScheduleUpdated =
  | { ok: true; schedule: ScheduleRecord }
  /** No row at the version read: changed since (merge again) or deleted (a fresh read says). */
  | { ok: false; reason: "changed" };

export async function updateSchedule(
  db: Db,
  target: { workspaceId: string; tableId: string; scheduleId: string },
  read: { version: number },
  change: ScheduleChange,
): Promise<ScheduleUpdated> {
  const [row] = await db
    .update(schedules)
    .set({ ...change, version: sql`${schedules.version} + 1`, updatedAt: sql`now()` })
    .where(
      and(
        eq(schedules.id, target.scheduleId),
        eq(schedules.tableId, target.tableId),
        eq(schedules.workspaceId, target.workspaceId),
        eq(schedules.version, read.version),
      ),
    )
    .returning(scheduleColumns);
  return row ? { ok: true, schedule: row } : { ok: false, reason: "changed" };
}

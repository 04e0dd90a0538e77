/**
 * Schedules: a table's run on a cron in a time zone. A schedule is checked when saved: its
 * cron (five fields) and zone (400 otherwise), and its run against the table as a Run
 * request is (unknown groups, a where naming no column → 400). Its next due time is
 * computed from now whenever the cron, zone or switch changes, so a schedule turned back
 * on starts with the next time to come, not the ones it missed. Firing is
 * services/schedule-fire.ts.
 */
import type { Issue } from "@/contracts/common";
import {
  type CreateScheduleRequest,
  MAX_SCHEDULES_PER_TABLE,
  type PatchScheduleRequest,
  Schedule,
  ScheduledRun,
  type ScheduleList,
} from "@/contracts/schedules";
import { conflict, type Failure, invalid, notFound } from "@/domain/errors";
import { newId } from "@/domain/ids";
import type { Result } from "@/domain/result";
import { cronProblem, isTimeZone, nextDue } from "@/domain/schedule-cron";
import { insertSchedule } from "@/store/schedules/create";
import { deleteSchedule as removeSchedule } from "@/store/schedules/delete";
import {
  getSchedule,
  listSchedules as readSchedules,
  type ScheduleRecord,
} from "@/store/schedules/read";
import { updateSchedule } from "@/store/schedules/update";
import type { ServiceContext } from "./context";
import { ownTable, readRunScope } from "./run-scope";

/** Tests and the scheduler pass their own clock; the API reads the real one. */
export interface Clock {
  now(): Date;
}
const SYSTEM_CLOCK: Clock = { now: () => new Date() };

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function schedule(record: ScheduleRecord): Schedule {
  const run = ScheduledRun.parse(record.run);
  return Schedule.parse({
    ...run,
    id: record.id,
    tableId: record.tableId,
    cron: record.cron,
    timezone: record.timezone,
    enabled: record.enabled,
    nextRunAt: record.enabled ? record.nextRunAt.toISOString() : null,
    lastRunAt: iso(record.lastRunAt),
    lastDispatchId: record.lastDispatchId,
    lastSkippedAt: iso(record.lastSkippedAt),
    skipped: record.skipped,
    lastError: record.lastError,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  });
}

/** The cron's and zone's problems (what saving refuses). */
function timeIssues(cron: string, timezone: string): Issue[] {
  const issues: Issue[] = [];
  const problem = cronProblem(cron);
  if (problem) issues.push({ path: "cron", message: problem });
  if (!isTimeZone(timezone))
    issues.push({
      path: "timezone",
      message: `unknown time zone "${timezone}" (an IANA name, e.g. Europe/Berlin)`,
    });
  return issues;
}

/** The run's problems against the table now: what a Run request with it would be refused for. */
async function runIssues(
  ctx: ServiceContext,
  tableId: string,
  run: ScheduledRun,
): Promise<Result<null, Failure>> {
  const table = await ownTable(ctx, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const scoped = readRunScope(table, tableId, run);
  return scoped.ok ? { ok: true, value: null } : scoped;
}

export async function createSchedule(
  ctx: ServiceContext,
  tableId: string,
  req: CreateScheduleRequest,
  clock: Clock = SYSTEM_CLOCK,
): Promise<Result<Schedule, Failure>> {
  const { cron, timezone, enabled, ...run } = req;
  const checked = await runIssues(ctx, tableId, run);
  if (!checked.ok) return checked;
  const issues = timeIssues(cron, timezone);
  if (issues.length > 0) return { ok: false, reason: invalid(issues) };
  const created = await insertSchedule(ctx.db, {
    id: newId("sched"),
    workspaceId: ctx.workspaceId,
    tableId,
    cron: cron.trim(),
    timezone,
    enabled,
    run,
    nextRunAt: nextDue(cron, timezone, clock.now()),
  });
  if (!created.ok)
    return {
      ok: false,
      reason:
        created.reason === "table_not_found"
          ? notFound("table")
          : conflict(`a table has at most ${MAX_SCHEDULES_PER_TABLE} schedules`),
    };
  ctx.log.info({ tableId, scheduleId: created.schedule.id, cron, timezone }, "schedule created");
  return { ok: true, value: schedule(created.schedule) };
}

export async function listSchedules(
  ctx: ServiceContext,
  tableId: string,
): Promise<Result<ScheduleList, Failure>> {
  if (!(await ownTable(ctx, tableId))) return { ok: false, reason: notFound("table") };
  const records = await readSchedules(ctx.db, ctx.workspaceId, tableId);
  return { ok: true, value: { schedules: records.map(schedule) } };
}

export async function patchSchedule(
  ctx: ServiceContext,
  tableId: string,
  scheduleId: string,
  req: PatchScheduleRequest,
  clock: Clock = SYSTEM_CLOCK,
): Promise<Result<Schedule, Failure>> {
  const target = { workspaceId: ctx.workspaceId, tableId, scheduleId };
  const current = await getSchedule(ctx.db, target);
  if (!current) return { ok: false, reason: notFound("schedule") };
  const { cron = current.cron, timezone = current.timezone, enabled, ...runFields } = req;
  const issues = timeIssues(cron, timezone);
  if (issues.length > 0) return { ok: false, reason: invalid(issues) };
  let run: ScheduledRun | undefined;
  if (Object.keys(runFields).length > 0) {
    // A new mode drops the old one's options (resume, staleAfterHours) unless given again.
    const { resume, staleAfterHours, ...base } = ScheduledRun.parse(current.run);
    const kept = runFields.mode === undefined || runFields.mode === base.mode;
    const merged = ScheduledRun.safeParse({
      ...base,
      ...(kept && resume !== undefined ? { resume } : {}),
      ...(kept && staleAfterHours !== undefined ? { staleAfterHours } : {}),
      ...runFields,
    });
    if (!merged.success)
      return {
        ok: false,
        reason: invalid(
          merged.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })),
        ),
      };
    run = merged.data;
    const checked = await runIssues(ctx, tableId, run);
    if (!checked.ok) return checked;
  }
  const retimed = req.cron !== undefined || req.timezone !== undefined || enabled === true;
  const updated = await updateSchedule(ctx.db, target, {
    ...(req.cron !== undefined ? { cron: cron.trim() } : {}),
    ...(req.timezone !== undefined ? { timezone } : {}),
    ...(enabled !== undefined ? { enabled } : {}),
    ...(run ? { run } : {}),
    ...(retimed ? { nextRunAt: nextDue(cron, timezone, clock.now()) } : {}),
  });
  if (!updated) return { ok: false, reason: notFound("schedule") };
  ctx.log.info({ tableId, scheduleId, ...req }, "schedule changed");
  return { ok: true, value: schedule(updated) };
}

export async function deleteSchedule(
  ctx: ServiceContext,
  tableId: string,
  scheduleId: string,
): Promise<Result<null, Failure>> {
  const gone = await removeSchedule(ctx.db, { workspaceId: ctx.workspaceId, tableId, scheduleId });
  if (!gone) return { ok: false, reason: notFound("schedule") };
  ctx.log.info({ tableId, scheduleId }, "schedule deleted");
  return { ok: true, value: null };
}

/**
 * Schedules: a table's run on a cron in a time zone. A schedule is checked when saved: its
 * cron (five fields) and zone (400 otherwise), and its run against the table as a Run
 * request is (unknown groups, a where naming no column → 400). Its next due time is
 * computed from now when the cron or zone changes or it is switched back on, so a schedule
 * turned back on starts with the next time to come, not the ones it missed; any other edit
 * keeps the due time it has, fired or not yet. A cron and zone with no next time from now
 * is a 400, like a bad cron. Firing is services/schedule-fire.ts.
 * Invariant: a PATCH is merged from one read of the schedule and written only if the
 * schedule has not been written since (store/schedules/update.ts, the version in its
 * WHERE); one that loses merges again from a fresh read, at most PATCH_ATTEMPTS times,
 * then answers 409. So two PATCHes at once both keep their fields (or the loser hears
 * 409), and a PATCH never puts back a due time the scheduler took meanwhile.
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
import { zodIssues } from "@/domain/json-text";
import type { Result } from "@/domain/result";
import { cronProblem, isTimeZone, nextDue } from "@/domain/schedule-cron";
import { at, type Pause } from "@/engine/race-points";
import { insertSchedule } from "@/store/schedules/create";
import { deleteSchedule as removeSchedule } from "@/store/schedules/delete";
import {
  getSchedule,
  listSchedules as readSchedules,
  type ScheduleRecord,
} from "@/store/schedules/read";
import { type ScheduleChange, updateSchedule } from "@/store/schedules/update";
import type { ServiceContext } from "./context";
import { ownTable, readRunScope } from "./run-scope";

/** The API reads the real clock; tests pass theirs (the scheduler's shape). */
const systemClock = () => new Date();

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

/** The first due time from now: a cron-parser failure is the cron's problem (400), not a 500. */
function firstDue(cron: string, timezone: string, now: Date): Result<Date, Failure> {
  try {
    return { ok: true, value: nextDue(cron, timezone, now) };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return {
      ok: false,
      reason: invalid([
        {
          path: "cron",
          message: `no next due time in ${timezone} from now could be found: ${why}`,
        },
      ]),
    };
  }
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
  clock: () => Date = systemClock,
): Promise<Result<Schedule, Failure>> {
  const { cron, timezone, enabled, ...run } = req;
  const checked = await runIssues(ctx, tableId, run);
  if (!checked.ok) return checked;
  const issues = timeIssues(cron, timezone);
  if (issues.length > 0) return { ok: false, reason: invalid(issues) };
  const first = firstDue(cron, timezone, clock());
  if (!first.ok) return first;
  const created = await insertSchedule(ctx.db, {
    id: newId("sched"),
    workspaceId: ctx.workspaceId,
    tableId,
    cron: cron.trim(),
    timezone,
    enabled,
    run,
    nextRunAt: first.value,
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

/** Merges a PATCH may make from one read before it answers 409 (each lost to another write). */
const PATCH_ATTEMPTS = 3;

export async function patchSchedule(
  ctx: ServiceContext,
  tableId: string,
  scheduleId: string,
  req: PatchScheduleRequest,
  clock: () => Date = systemClock,
  /** Tests hold a merge before its write with it (a write of another lands then). */
  pause?: Pause,
): Promise<Result<Schedule, Failure>> {
  const target = { workspaceId: ctx.workspaceId, tableId, scheduleId };
  // The write is guarded on the version merged from: another PATCH, or the scheduler taking
  // a due time, in between makes it miss, and the merge starts again from a fresh read (and
  // a fresh clock), so no field of the other write is lost and no taken due time comes back.
  for (let attempt = 0; attempt < PATCH_ATTEMPTS; attempt++) {
    const current = await getSchedule(ctx.db, target);
    if (!current) return { ok: false, reason: notFound("schedule") };
    const change = await mergePatch(ctx, current, req, clock);
    if (!change.ok) return change;
    await at(pause, "schedule:merged", { scheduleId, attempt: String(attempt) });
    const updated = await updateSchedule(ctx.db, target, current, change.value);
    if (updated.ok) {
      ctx.log.info({ tableId, scheduleId, ...req }, "schedule changed");
      return { ok: true, value: schedule(updated.schedule) };
    }
  }
  return {
    ok: false,
    reason: conflict("The schedule was changed by someone else meanwhile; try again"),
  };
}

/** What a PATCH writes over the schedule as read: its fields merged, and a due time if it moves. */
async function mergePatch(
  ctx: ServiceContext,
  current: ScheduleRecord,
  req: PatchScheduleRequest,
  clock: () => Date,
): Promise<Result<ScheduleChange, Failure>> {
  const { cron = current.cron, timezone = current.timezone, enabled, ...runFields } = req;
  const issues = timeIssues(cron, timezone);
  if (issues.length > 0) return { ok: false, reason: invalid(issues) };
  let run: ScheduledRun | undefined;
  if (Object.keys(runFields).length > 0) {
    // A new mode drops the old one's options (resume, staleAfterHours) unless given again.
    const { resume, staleAfterHours, ...base } = ScheduledRun.parse(current.run);
    const kept = runFields.mode === undefined || runFields.mode === base.mode;
    const fields = {
      ...base,
      ...(kept && resume !== undefined ? { resume } : {}),
      ...(kept && staleAfterHours !== undefined ? { staleAfterHours } : {}),
      ...runFields,
    };
    // A field given as null is dropped from the run.
    const merged = ScheduledRun.safeParse(
      Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null)),
    );
    if (!merged.success) return { ok: false, reason: invalid(zodIssues(merged.error)) };
    run = merged.data;
    const checked = await runIssues(ctx, current.tableId, run);
    if (!checked.ok) return checked;
  }
  // Only a new cron or zone, or a switch back on, moves the due time: re-enabling an
  // enabled schedule must not drop a due time not yet fired.
  const retimed =
    cron.trim() !== current.cron ||
    timezone !== current.timezone ||
    (enabled === true && !current.enabled);
  let nextRunAt: Date | undefined;
  if (retimed) {
    const first = firstDue(cron, timezone, clock());
    if (!first.ok) return first;
    nextRunAt = first.value;
  }
  return {
    ok: true,
    value: {
      ...(req.cron !== undefined ? { cron: cron.trim() } : {}),
      ...(req.timezone !== undefined ? { timezone } : {}),
      ...(enabled !== undefined ? { enabled } : {}),
      ...(run ? { run } : {}),
      ...(nextRunAt ? { nextRunAt } : {}),
    },
  };
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

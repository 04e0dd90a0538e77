import { z } from "zod";
import { modeRules, ScheduledRunFields } from "./runs";

/** Schedules a table may have; the insert enforces it (store/schedules/create.ts). */
export const MAX_SCHEDULES_PER_TABLE = 20;

/** Five fields, read in the schedule's time zone; checked by the service (400 otherwise). */
const Cron = z.string().trim().min(9).max(200);
/** An IANA name; checked by the service (400 otherwise). */
const TimeZone = z.string().min(1).max(100);

/**
 * A schedule: a cron in a time zone, and the run it starts each due time (the body of
 * `POST /runs` without rowIds and dryRun).
 */
export const CreateScheduleRequest = modeRules(
  ScheduledRunFields.extend({
    cron: Cron,
    timezone: TimeZone.default("UTC"),
    enabled: z.boolean().default(true),
  }),
);
export type CreateScheduleRequest = z.infer<typeof CreateScheduleRequest>;

/**
 * The fields given replace the schedule's; run fields given replace those of its run (the
 * run that results is checked as a run request is). The run's optional fields given as
 * null are dropped from it (no where, every group, no limit, the plan's window, no cap).
 */
const runField = ScheduledRunFields.shape;
export const PatchScheduleRequest = ScheduledRunFields.partial().extend({
  groupIds: runField.groupIds.nullable(),
  where: runField.where.nullable(),
  limit: runField.limit.nullable(),
  window: runField.window.nullable(),
  maxCredits: runField.maxCredits.nullable(),
  maxCreditsPerRow: runField.maxCreditsPerRow.nullable(),
  cron: Cron.optional(),
  timezone: TimeZone.optional(),
  enabled: z.boolean().optional(),
});
export type PatchScheduleRequest = z.infer<typeof PatchScheduleRequest>;

/** The run a schedule starts, as given. */
export const ScheduledRun = modeRules(ScheduledRunFields);
export type ScheduledRun = z.infer<typeof ScheduledRun>;

export const Schedule = ScheduledRunFields.extend({
  id: z.string(),
  tableId: z.string(),
  cron: z.string(),
  timezone: z.string(),
  enabled: z.boolean(),
  /** The next due time (while enabled). */
  nextRunAt: z.string().nullable(),
  /** When it last started a run, and that run. */
  lastRunAt: z.string().nullable(),
  lastDispatchId: z.string().nullable(),
  /** The last due time skipped because its run before was still active, and how many were. */
  lastSkippedAt: z.string().nullable(),
  skipped: z.number().int(),
  /** Why the last due time started no run (e.g. a group it names was deleted); null after a run. */
  lastError: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Schedule = z.infer<typeof Schedule>;

/** A table's schedules, oldest first. */
export const ScheduleList = z.object({ schedules: z.array(Schedule) });
export type ScheduleList = z.infer<typeof ScheduleList>;

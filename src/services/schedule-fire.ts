/**
 * The scheduler: starts the runs of the schedules due now. Invariants: a due time starts
 * at most one run across every process — the due time moves on (store/schedules/claim.ts,
 * a guarded UPDATE) in the transaction that creates the run and stamps its first pages, so
 * two schedulers never both start it and a failed start leaves it due; the run's carriers
 * and background stamping are handed out only after that commit (engine/dispatcher.ts
 * `launchStamped`). A due time while the schedule's last run is still active starts nothing
 * and is recorded as skipped. The next due time is the first after `now`, so after
 * downtime one run catches up, not one per missed time. One schedule never holds up the
 * others: a due time that throws (its run, or its next time) is recorded on the schedule
 * (`last_error`) and moved on, since an unmoved one would stay the oldest due forever.
 * `now` is the caller's clock.
 */

import type { Logger } from "@/config/log";
import { ScheduledRun } from "@/contracts/schedules";
import type { Failure } from "@/domain/errors";
import { nextDue } from "@/domain/schedule-cron";
import { heldWindow, launchStamped, type Stamped, stampRun } from "@/engine/dispatcher";
import type { RequestEngine } from "@/engine/handle";
import { tableForEngine } from "@/store/engine-reads";
import {
  claimDueSchedule,
  failDueTime,
  recordScheduledRun,
  recordScheduleError,
} from "@/store/schedules/claim";
import { type DueSchedule, dueSchedules } from "@/store/schedules/read";
import { startScope } from "./run-scope";

/**
 * How often a local worker looks for due schedules: a run starts at most this late. Each
 * look is one indexed read when nothing is due.
 */
export const SCHEDULE_EVERY_MS = 5_000;

/** Due schedules one pass reads; a full page is followed by another pass at once. */
const PASS_SCHEDULES = 50;

/** How far a due time whose next one cron-parser cannot find moves: it looks again then. */
const RETRY_NEXT_MS = 3_600_000;

export interface FireReport {
  /** Runs started. */
  fired: number;
  /** Due times skipped: the schedule's last run was still active. */
  skipped: number;
  /** Due times another scheduler took first. */
  lost: number;
  /** Due times whose run no longer fits the table (recorded on the schedule). */
  failed: number;
}

export type Fired =
  | { kind: "fired"; tableId: string; run: Stamped }
  | { kind: "skipped" | "lost" | "failed" };

export interface FirePasses {
  /** Aborted: the passes end after the schedule in hand (a worker stopping, a task's time up). */
  signal?: AbortSignal;
  /** Due schedules a pass reads. Default: PASS_SCHEDULES. */
  pageSize?: number;
}

/**
 * Passes over the due schedules, each at the clock's time, while a pass reads a full page
 * (so many due at once all start now, not 50 a minute) and the signal allows.
 */
export async function fireDueSchedules(
  engine: RequestEngine & { log: Logger },
  clock: () => Date,
  opts: FirePasses = {},
): Promise<FireReport> {
  const report: FireReport = { fired: 0, skipped: 0, lost: 0, failed: 0 };
  const pageSize = opts.pageSize ?? PASS_SCHEDULES;
  // Due times already handled by this call: one still due (its move failed too) ends the
  // passes, so they never spin on it; the next call retries it.
  const handled = new Set<string>();
  let more = true;
  while (more && !opts.signal?.aborted) {
    const now = clock();
    const page = await dueSchedules(engine.db, now, pageSize);
    more = page.length === pageSize;
    for (const due of page) {
      const sighting = `${due.id}@${due.seen}`;
      if (opts.signal?.aborted || handled.has(sighting)) {
        more = false;
        break;
      }
      handled.add(sighting);
      report[await fireOne(engine, due, now)]++;
    }
  }
  return report;
}

/** One due schedule, whatever it throws: a throw is logged and recorded on the schedule. */
async function fireOne(
  engine: RequestEngine & { log: Logger },
  due: DueSchedule,
  now: Date,
): Promise<Fired["kind"]> {
  let next: Date | undefined;
  try {
    next = nextDue(due.cron, due.timezone, now);
    const outcome = await fireSchedule(engine, due, now, next);
    if (outcome.kind === "fired") {
      await launchStamped(engine, { tableId: outcome.tableId, run: outcome.run });
      engine.log.info(
        { scheduleId: due.id, tableId: outcome.tableId, dispatchId: outcome.run.dispatchId },
        "scheduled run started",
      );
    } else if (outcome.kind === "skipped") {
      engine.log.info({ scheduleId: due.id }, "scheduled run skipped: its last run is active");
    }
    return outcome.kind;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    // A run that was created commits with its due time moved on; only its hand-out threw
    // then, and the re-drive hands it out: the guarded UPDATE below finds nothing due.
    const moved = next ?? new Date(now.getTime() + RETRY_NEXT_MS);
    const message = next
      ? `the run could not start: ${why}`
      : `no next due time could be computed (${why}); this due time started nothing, looking again at ${moved.toISOString()}`;
    engine.log.error({ err, scheduleId: due.id }, "scheduled run failed; recorded on the schedule");
    try {
      await failDueTime(engine.db, { ...due, now, next: moved, message });
    } catch (recordErr) {
      engine.log.error(
        { err: recordErr, scheduleId: due.id },
        "recording a schedule's failure failed",
      );
    }
    return "failed";
  }
}

function failureText(failure: Failure): string {
  const issues = failure.code === "validation_failed" ? failure.issues : [];
  return [failure.message, ...issues.map((i) => `${i.path}: ${i.message}`)].join("; ");
}

/** One due time as a scheduler saw it (`due.seen`): taken, skipped, or lost to another. */
export async function fireSchedule(
  engine: RequestEngine,
  due: DueSchedule,
  now: Date,
  next: Date = nextDue(due.cron, due.timezone, now),
): Promise<Fired> {
  return engine.db.transaction(async (tx): Promise<Fired> => {
    const claimed = await claimDueSchedule(tx, { ...due, now, next });
    if (!claimed) return { kind: "lost" };
    if (claimed.busy) return { kind: "skipped" };
    const run = ScheduledRun.safeParse(claimed.run);
    const table = await tableForEngine(tx, claimed.tableId);
    const scope = table && run.success ? startScope(table, claimed.tableId, run.data) : null;
    if (!scope?.ok) {
      const message = scope ? failureText(scope.reason) : "the schedule's run is not valid";
      await recordScheduleError(tx, { id: due.id, message });
      return { kind: "failed" };
    }
    const stamped = await stampRun(
      { db: tx, ...(engine.pause ? { pause: engine.pause } : {}) },
      { ...scope.value, window: heldWindow(engine.backend, scope.value.window) },
    );
    await recordScheduledRun(tx, { id: due.id, dispatchId: stamped.dispatchId, now });
    return { kind: "fired", tableId: claimed.tableId, run: stamped };
  });
}

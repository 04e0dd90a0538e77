/**
 * The scheduler: starts the runs of the schedules due now. Invariants: a due time starts
 * at most one run across every process — the due time moves on (store/schedules/claim.ts,
 * a guarded UPDATE) in the transaction that creates the run and stamps its first pages, so
 * two schedulers never both start it and a failed start leaves it due; the run's carriers
 * and background stamping are handed out only after that commit (engine/dispatcher.ts
 * `launchStamped`). A due time while the schedule's last run is still active starts nothing
 * and is recorded as skipped. The next due time is the first after `now`, so after
 * downtime one run catches up, not one per missed time. `now` is the caller's clock.
 */

import type { Logger } from "@/config/log";
import { ScheduledRun } from "@/contracts/schedules";
import type { Failure } from "@/domain/errors";
import { nextDue } from "@/domain/schedule-cron";
import { heldWindow, launchStamped, type Stamped, stampRun } from "@/engine/dispatcher";
import type { RequestEngine } from "@/engine/handle";
import { tableForEngine } from "@/store/engine-reads";
import { claimDueSchedule, recordScheduledRun, recordScheduleError } from "@/store/schedules/claim";
import { type DueSchedule, dueSchedules } from "@/store/schedules/read";
import { startScope } from "./run-scope";

/**
 * How often a local worker looks for due schedules: a run starts at most this late. Each
 * look is one indexed read when nothing is due.
 */
export const SCHEDULE_EVERY_MS = 5_000;

/** Due schedules one pass looks at; the rest wait for the next pass. */
const PASS_SCHEDULES = 50;

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

export async function fireDueSchedules(
  engine: RequestEngine & { log: Logger },
  now: Date,
): Promise<FireReport> {
  const report: FireReport = { fired: 0, skipped: 0, lost: 0, failed: 0 };
  for (const due of await dueSchedules(engine.db, now, PASS_SCHEDULES)) {
    const outcome = await fireSchedule(engine, due, now);
    report[outcome.kind]++;
    if (outcome.kind === "fired") {
      await launchStamped(engine, { tableId: outcome.tableId, run: outcome.run });
      engine.log.info(
        { scheduleId: due.id, tableId: outcome.tableId, dispatchId: outcome.run.dispatchId },
        "scheduled run started",
      );
    } else if (outcome.kind === "skipped") {
      engine.log.info({ scheduleId: due.id }, "scheduled run skipped: its last run is active");
    }
  }
  return report;
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
): Promise<Fired> {
  const next = nextDue(due.cron, due.timezone, now);
  return engine.db.transaction(async (tx): Promise<Fired> => {
    const claimed = await claimDueSchedule(tx, { id: due.id, seen: due.seen, now, next });
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

/**
 * Scheduled tasks, from the one table of maintenance jobs (src/runtime/maintenance.ts):
 * the re-drive, the drain of the run-cancel outbox, the rewrite of large Stops' covered cells, the progress counters' fold and the
 * table schedules due every minute, the destinations' sender for each minute, the pruning
 * of old rows every ten. Each is its own exported task (trigger.dev indexes exports); ids
 * and schedules come from the table, so the local worker and these cannot drift apart.
 */
import { schedules } from "@trigger.dev/sdk";
import {
  DRAIN_DESTINATIONS,
  DRAIN_RUN_CANCELS,
  FIRE_SCHEDULES,
  FOLD_COUNTS,
  type MaintenanceJob,
  PRUNE,
  REDRIVE,
  REWRITE_COVERED,
  ROW_INDEXES,
} from "@/runtime/maintenance";
import { taskEngine } from "./deps";

/** A run's budget (unless the job sets its own); a job is asked to end a minute before it, and the next run goes on. */
const MAX_DURATION_S = 300;

function scheduled(job: MaintenanceJob) {
  const budgetS = job.maxDurationS ?? MAX_DURATION_S;
  return schedules.task({
    id: job.id,
    cron: job.cron,
    maxDuration: budgetS,
    run: async () => taskEngine().maintain(job, AbortSignal.timeout((budgetS - 60) * 1000)),
  });
}

export const redriveOrphansTask = scheduled(REDRIVE);
export const pruneTask = scheduled(PRUNE);
export const drainRunCancelsTask = scheduled(DRAIN_RUN_CANCELS);
export const foldCountsTask = scheduled(FOLD_COUNTS);
export const fireSchedulesTask = scheduled(FIRE_SCHEDULES);
export const drainDestinationsTask = scheduled(DRAIN_DESTINATIONS);
export const rewriteCoveredTask = scheduled(REWRITE_COVERED);
export const rowIndexesTask = scheduled(ROW_INDEXES);

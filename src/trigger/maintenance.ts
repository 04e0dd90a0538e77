/**
 * Scheduled tasks: the re-drive every minute (a stranded cell is healed within about a
 * minute plus twice its grace period, which counts from the row's hand-out too) and the
 * pruning of old events and webhook deliveries, every minute too the drain of the run-cancel outbox, which finishes what the API process's drainer
 * left (that process ended, or the web app runs where nothing lives past a response).
 * All are idempotent, so an overlapping or repeated schedule does no harm.
 */
import { schedules } from "@trigger.dev/sdk";
import { readEnv } from "../config/env";
import { redriveOrphans } from "../engine/redrive";
import { drainRunCancels, drainSettingsFromEnv } from "../engine/run-cancel-drain";
import { pruneEvents } from "../store/events/prune";
import { pruneHookDeliveries } from "../store/hook-deliveries/prune";
import { pruneStops } from "../store/stops/prune";
import { taskDeps } from "./deps";

export const redriveOrphansTask = schedules.task({
  id: "redrive-orphans",
  cron: "* * * * *",
  maxDuration: 300,
  run: async () => redriveOrphans(taskDeps()),
});

export const pruneTask = schedules.task({
  id: "prune-events",
  cron: "*/10 * * * *",
  maxDuration: 300,
  run: async () => {
    const db = taskDeps().database.db;
    const events = await pruneEvents(db, readEnv().EVENTS_RETENTION_HOURS);
    const deliveries = await pruneHookDeliveries(db);
    const stops = await pruneStops(db);
    return { events, deliveries, stops };
  },
});

export const drainRunCancelsTask = schedules.task({
  id: "drain-run-cancels",
  cron: "* * * * *",
  maxDuration: 300,
  run: async () => {
    const deps = taskDeps();
    // Left before maxDuration: what is not done by then, the next minute's run does.
    const signal = AbortSignal.timeout(240_000);
    return drainRunCancels({
      db: deps.database.db,
      backend: deps.backend,
      log: deps.log,
      settings: drainSettingsFromEnv(readEnv()),
      signal,
    });
  },
});

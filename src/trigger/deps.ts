/**
 * What Cellflow's trigger.dev tasks run with, once per run process: the database from
 * the environment (DATABASE_URL, and DATABASE_URL_UNPOOLED for the row locks: never a
 * pooler), a trigger.dev backend for the runs the tasks start themselves, and the engine's
 * logger writing to the run's log view (task-log.ts). Tests seed their own through
 * trigger.dev's `locals` (see `taskDepsKey`).
 */

import { getDatabase } from "@db/instance";
import { locals } from "@trigger.dev/sdk";
import { triggerBackendFromEnv } from "@/backends/trigger";
import { readEnv } from "@/config/env";
import type { EngineDeps } from "@/engine/carrier";
import { logToTaskRun } from "./task-log";

export const taskDepsKey = locals.create<EngineDeps>("cellflow.engine-deps");

let fromEnv: EngineDeps | undefined;

export function taskDeps(): EngineDeps {
  const seeded = locals.get(taskDepsKey);
  if (seeded) return seeded;
  if (!fromEnv) {
    const env = readEnv();
    // Before anything takes a child of the process logger: every engine line of this run
    // process, including those of modules that log on their own, reaches the run's view.
    const logger = logToTaskRun().child({ component: "trigger-task" });
    const database = getDatabase();
    fromEnv = {
      database,
      backend: triggerBackendFromEnv(env, { log: logger, db: database.db }),
      log: logger,
    };
  }
  return fromEnv;
}

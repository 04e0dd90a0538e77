/**
 * What Cellflow's trigger.dev tasks run with, once per run process: the engine assembled
 * at the composition root (src/runtime/engine.ts) from the database in the environment
 * (DATABASE_URL, and DATABASE_URL_UNPOOLED for the row locks: never a pooler), a
 * trigger.dev backend for the runs the tasks start themselves, and the engine's logger
 * writing to the run's log view (task-log.ts). Tests seed their own through trigger.dev's
 * `locals` (see `taskEngineKey`).
 */

import { getDatabase } from "@db/instance";
import { locals } from "@trigger.dev/sdk";
import { triggerBackendFromEnv } from "@/backends/trigger";
import { readEnv } from "@/config/env";
import { assembleEngine, type EngineRuntime } from "@/runtime/engine";
import { logToTaskRun } from "./task-log";

export const taskEngineKey = locals.create<EngineRuntime>("cellflow.engine");

let fromEnv: EngineRuntime | undefined;

export function taskEngine(): EngineRuntime {
  const seeded = locals.get(taskEngineKey);
  if (seeded) return seeded;
  if (!fromEnv) {
    const env = readEnv();
    // Before anything takes a child of the process logger: every engine line of this run
    // process, including those of modules that log on their own, reaches the run's view.
    const logger = logToTaskRun().child({ component: "trigger-task" });
    const database = getDatabase();
    fromEnv = assembleEngine({
      runtime: "trigger",
      env,
      database,
      backend: triggerBackendFromEnv(env, { log: logger, db: database.db }),
      log: logger,
    });
  }
  return fromEnv;
}

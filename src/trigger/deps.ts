/**
 * What Cellflow's trigger.dev tasks run with, once per run process: the engine assembled
 * at the composition root (src/runtime/engine.ts) from the database in the environment
 * (DATABASE_URL, and DATABASE_URL_UNPOOLED for the row locks: never a pooler), a
 * trigger.dev backend for the runs the tasks start themselves, and the engine's logger
 * writing to the run's log view (task-log.ts), the process's metrics flush, and spans
 * through trigger.dev's own OpenTelemetry. Tests seed their own through trigger.dev's
 * `locals` (see `taskEngineKey`).
 */

import { getDatabase } from "@db/instance";
import { locals } from "@trigger.dev/sdk";
import { triggerBackendFromEnv } from "@/backends/trigger";
import { readEnv } from "@/config/env";
import type { FlushHandle } from "@/metrics/flush-loop";
import { assembleEngine, type EngineRuntime } from "@/runtime/engine";
import { startMetricsFlush } from "@/runtime/metrics-flush";
import { syncTracing } from "@/tracing/spans";
import { logToTaskRun } from "./task-log";

export const taskEngineKey = locals.create<EngineRuntime>("cellflow.engine");

let fromEnv: EngineRuntime | undefined;
let metricsFlush: FlushHandle | undefined;

export function taskEngine(): EngineRuntime {
  const seeded = locals.get(taskEngineKey);
  if (seeded) return seeded;
  if (!fromEnv) {
    // trigger.dev registered its tracer provider before any task ran: our spans go to it,
    // nested under its run spans (we register none of our own here).
    syncTracing();
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
    // The run process's series go to Postgres like any process's; `flushTaskMetrics` at
    // each run's end sends them before the process may be frozen or ended.
    metricsFlush = startMetricsFlush({
      db: database.db,
      kind: "trigger",
      log: logger,
      everyMs: env.CELLFLOW_METRICS_FLUSH_MS,
    });
  }
  return fromEnv;
}

/** After a run: what its process counted goes to Postgres now (one statement). */
export async function flushTaskMetrics(): Promise<void> {
  await metricsFlush?.flushNow();
}

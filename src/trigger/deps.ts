/**
 * What Cellflow's trigger.dev tasks run with, once per run process: the database from
 * the environment (DATABASE_URL, and DATABASE_URL_UNPOOLED for the row locks: never a
 * pooler) and a trigger.dev backend for the runs the tasks start themselves. Tests seed
 * their own through trigger.dev's `locals` (see `taskDepsKey`).
 */
import { locals } from "@trigger.dev/sdk";
import { getDatabase } from "../../db/instance";
import { TriggerBackend } from "../backends/trigger";
import { readEnv } from "../config/env";
import { log } from "../config/log";
import type { EngineDeps } from "../engine/carrier";

export const taskDepsKey = locals.create<EngineDeps>("cellflow.engine-deps");

let fromEnv: EngineDeps | undefined;

export function taskDeps(): EngineDeps {
  const seeded = locals.get(taskDepsKey);
  if (seeded) return seeded;
  if (!fromEnv) {
    const env = readEnv();
    if (!env.TRIGGER_SECRET_KEY) throw new Error("TRIGGER_SECRET_KEY is not set in this run");
    const logger = log().child({ component: "trigger-task" });
    fromEnv = {
      database: getDatabase(),
      backend: new TriggerBackend({
        accessToken: env.TRIGGER_SECRET_KEY,
        baseURL: env.TRIGGER_API_URL,
        log: logger,
      }),
      log: logger,
    };
  }
  return fromEnv;
}

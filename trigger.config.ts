import { defineConfig } from "@trigger.dev/sdk";
import { readEnv } from "./src/config/env";

/**
 * The scaled shape: trigger.dev runs the tasks in src/trigger. The project ref comes from
 * TRIGGER_PROJECT_REF (the dashboard's "proj_…" id). The engine decides retries itself,
 * so the platform's are off.
 */
export default defineConfig({
  project: readEnv().TRIGGER_PROJECT_REF ?? "proj_set_TRIGGER_PROJECT_REF",
  runtime: "node",
  dirs: ["src/trigger"],
  maxDuration: 3600,
  retries: { enabledInDev: false, default: { maxAttempts: 1 } },
  logLevel: "info",
});

/**
 * trigger.dev project config for `npm run deploy:trigger` (README, "Deploy on
 * trigger.dev + Neon"). The tasks are thin wrappers in src/trigger over engine functions.
 * Retries are off everywhere: the engine decides what runs again. On deploy, the task
 * variables set in the deploying shell (src/config/task-env.ts) are pushed to the
 * environment being deployed: tasks see nothing of the web app's environment otherwise.
 * Traces: the tasks use the platform's own OpenTelemetry (the tracer provider trigger.dev
 * registers in every run, which sets OTEL_EXPORTER_OTLP_ENDPOINT to its collector), so
 * the engine's spans nest under its run spans; to send them to a collector of your own as
 * well, add its exporter to `telemetry.exporters` here.
 */
import { syncEnvVars } from "@trigger.dev/build/extensions/core";
import { defineConfig } from "@trigger.dev/sdk";
import { taskEnvVars } from "./src/config/task-env";

export default defineConfig({
  project: process.env.TRIGGER_PROJECT_REF ?? "proj_set_TRIGGER_PROJECT_REF",
  dirs: ["./src/trigger"],
  runtime: "node",
  // The engine's lines are filtered by LOG_LEVEL before they reach the SDK's logger.
  logLevel: "debug",
  maxDuration: 3_600,
  retries: { enabledInDev: false, default: { maxAttempts: 1 } },
  build: {
    extensions: [syncEnvVars(() => taskEnvVars(process.env))],
  },
});

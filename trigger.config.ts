/**
 * trigger.dev project config for `npx trigger.dev deploy` (README, "Deploy on
 * trigger.dev + Neon"). The tasks are thin wrappers in src/trigger over engine functions.
 * Retries are off everywhere: the engine decides what runs again.
 */
import { defineConfig } from "@trigger.dev/sdk";

export default defineConfig({
  project: process.env.TRIGGER_PROJECT_REF ?? "proj_set_TRIGGER_PROJECT_REF",
  dirs: ["./src/trigger"],
  runtime: "node",
  maxDuration: 3_600,
  retries: { enabledInDev: false, default: { maxAttempts: 1 } },
});

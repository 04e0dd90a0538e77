import { defineConfig } from "vitest/config";

/**
 * CELLFLOW_TEST_DRIVER=neon (`npm run test:neon`) runs these through @neondatabase/serverless's
 * WebSocket Pool, via a local WebSocket-to-TCP proxy in front of the embedded Postgres
 * (test/helpers/global-setup.ts), in-process and in spawned worker processes alike.
 * Not in it: schema-drift (drizzle-kit against the files, no connection), unit tests (no
 * database), e2e (`npm start` with an embedded Postgres of its own) and, for the lane's
 * time (~45 s of it), background-stamping: its paging logic is driver-independent, and
 * the carriers and locks it drives are the ones engine-run and engine-processes cover.
 */
const NEON_LANE = [
  "test/integration/api-*.test.ts",
  "test/integration/auto-run.test.ts",
  "test/integration/cell-guards.test.ts",
  "test/integration/database-client.test.ts",
  "test/integration/deadlines.test.ts",
  "test/integration/engine-processes.test.ts",
  "test/integration/engine-run.test.ts",
  // Single flight of the enrichment cache: claims through the serverless driver too.
  "test/integration/enrichment-cache.test.ts",
  "test/integration/events.test.ts",
  "test/integration/events-fanout.test.ts",
  "test/integration/redrive.test.ts",
  "test/integration/row-step.test.ts",
  "test/integration/waker.test.ts",
];

export default defineConfig({
  // The @/ (src) and @db/ (db) import aliases of tsconfig.json.
  resolve: { tsconfigPaths: true },
  test: {
    include: process.env.CELLFLOW_TEST_DRIVER === "neon" ? NEON_LANE : ["test/**/*.test.ts"],
    globalSetup: ["test/helpers/global-setup.ts"],
    setupFiles: ["test/helpers/file-hooks.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 180_000,
    // Two cores: more parallel files only queue on the same Postgres.
    maxWorkers: 2,
    // A fixed key for the tests' encrypted secrets (webhook and workspace secrets); files
    // that test key handling set their own. The endpoints tests call stand on loopback, so
    // the private-network guard is off; the files that test the guard turn it on.
    env: {
      LOG_LEVEL: "silent",
      CELLFLOW_SECRET_KEY: "11".repeat(32),
      CELLFLOW_ALLOW_PRIVATE_NETWORK: "1",
    },
  },
});

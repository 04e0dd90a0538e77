import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/helpers/global-setup.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 180_000,
    // Two cores: more parallel files only queue on the same Postgres.
    maxWorkers: 2,
    env: { LOG_LEVEL: "silent" },
  },
});

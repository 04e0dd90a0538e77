import { defineConfig } from "vitest/config";
import base from "./vitest.config";

/**
 * `npm run test:scale`: the tests that build a table of a million rows and judge times
 * (test/scale/*.scale.ts), one file at a time; not part of `npm test`.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/scale/**/*.scale.ts"],
    fileParallelism: false,
    testTimeout: 900_000,
  },
});

/**
 * `npm run test:scale`: the grid at 1,000,000 rows (issue 33, item 4), in real headless
 * Chromium against the real `npm start`, the table built in one SQL statement. Judged
 * against the targets — first paint ≤ 2 s, the last row ≤ 2 s, a sort ≤ 3 s, a filter
 * ≤ 3 s — and the figures printed with the load average (the machine is shared). Not in
 * `npm test` (test/e2e/ui-grid-scale.test.ts walks the same paths at 100,000 rows there).
 */
import os from "node:os";
import { beforeAll, describe, expect, it } from "vitest";
import { bigTable, rowIndexesSettled, walkGrid } from "../helpers/grid-scale";
import { type UiSession, uiSessionOfFile } from "../helpers/ui-session";

const ROWS = Number(process.env.SCALE_GRID_ROWS ?? 1_000_000);
const s: UiSession = uiSessionOfFile("cellflow-scale-grid-");
let tableId = "";

beforeAll(async () => {
  await s.page.goto(s.app.signinUrl);
  await s.page.waitForURL(/\/tables$/);
  const t0 = performance.now();
  tableId = await bigTable(s, ROWS);
  console.log(`grid scale: ${ROWS} rows built in ${Math.round(performance.now() - t0)} ms`);
}, 900_000);

describe(`the grid at ${ROWS.toLocaleString("en")} rows`, () => {
  it("first paint ≤ 2 s, last row ≤ 2 s, sort ≤ 3 s, filter ≤ 3 s (with the row indexes built)", async () => {
    const load = () =>
      os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ");
    // Cold: the first sorts and filters scan the table (and record the indexes to build).
    const cold = await walkGrid(s, tableId, ROWS);
    console.log(`grid scale at ${ROWS} rows, cold (load ${load()}):`);
    for (const [step, ms] of Object.entries(cold)) console.log(`  ${step}: ${Math.round(ms)} ms`);
    const t0 = performance.now();
    const built = await rowIndexesSettled(s, tableId);
    console.log(`row indexes settled in ${Math.round(performance.now() - t0)} ms:`, built);
    expect(Object.values(built).every((st) => st === "ready")).toBe(true);
    // Warm: the same walk, served by the indexes.
    const t = await walkGrid(s, tableId, ROWS);
    console.log(`grid scale at ${ROWS} rows, warm (load ${load()}):`);
    for (const [step, ms] of Object.entries(t)) console.log(`  ${step}: ${Math.round(ms)} ms`);
    expect.soft(t.firstPaintMs, "first paint").toBeLessThanOrEqual(2_000);
    expect.soft(t.lastRowMs, "last row").toBeLessThanOrEqual(2_000);
    expect.soft(t.sortNumberMs, "sort by a number").toBeLessThanOrEqual(3_000);
    expect.soft(t.sortTextMs, "sort by a text").toBeLessThanOrEqual(3_000);
    expect.soft(t.filterNumberMs, "filter by a number").toBeLessThanOrEqual(3_000);
    expect.soft(t.filterTextMs, "filter by a text").toBeLessThanOrEqual(3_000);
  }, 2_400_000);
});

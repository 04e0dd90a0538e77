/**
 * The grid at 100,000 rows, in real headless Chromium against the real `npm start` (the
 * table built in one SQL statement): the first page shows, a scroll to the bottom shows
 * the last row (read from the end, not after every page), a scroll to the middle shows
 * rows, a header sorts by a number and by a text column, a filter narrows by a number and
 * by a text. No timing is judged here: `npm run test:scale` walks the same paths at
 * 1,000,000 rows against the targets (test/scale/grid-1m.scale.ts).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { bigTable, rowIndexesSettled, walkGrid } from "../helpers/grid-scale";
import { type UiSession, uiSessionOfFile } from "../helpers/ui-session";

const ROWS = 100_000;
const s: UiSession = uiSessionOfFile("cellflow-ui-grid-scale-");
let tableId = "";

beforeAll(async () => {
  await s.page.goto(s.app.signinUrl);
  await s.page.waitForURL(/\/tables$/);
  tableId = await bigTable(s, ROWS);
}, 240_000);

describe("the grid at 100,000 rows", () => {
  it("shows the first row, the last, the middle, sorted and filtered rows, holding a window of them", async () => {
    const timings = await walkGrid(s, tableId, ROWS);
    expect(Object.values(timings).every((ms) => ms > 0)).toBe(true);
    // The browser holds a window, not the table: its rows are few.
    const held = await s.page.locator("[data-testid=grid-row]").count();
    expect(held).toBeLessThan(100);
  }, 300_000);

  it("walks the same paths again once the sorts' and filters' row indexes are built", async () => {
    // The walk above recorded them (the table is past CELLFLOW_ROW_INDEX_MIN_ROWS).
    const built = await rowIndexesSettled(s, tableId, 240_000);
    expect(built).toEqual({
      "n:sort_asc": "ready",
      "n:sort_desc": "ready",
      "t:sort_asc": "ready",
      "t:sort_desc": "ready",
      "t:trgm": "ready",
    });
    const timings = await walkGrid(s, tableId, ROWS);
    expect(Object.values(timings).every((ms) => ms > 0)).toBe(true);
  }, 300_000);
});

/**
 * Finding rows in the grid, in real headless Chromium against the real `npm start`: the
 * filter bar narrows the rows to those the server says match; a column header sorts them
 * (ascending, descending, off); "Run failed on matching rows" re-runs only the failed
 * cells of the rows the filter shows; Run ▾ › Run matching… starts a run with the
 * conditions built in its dialog; Run ▾ › Run stale rows… runs what is stale (never run, or
 * completed longer ago than the hours given), not what ran within them.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/processes";
import {
  shownStatuses,
  shownValues,
  type UiSession,
  uiApi,
  uiSessionOfFile,
  uiWorkflow,
} from "../helpers/ui-session";

const s: UiSession = uiSessionOfFile("cellflow-ui-filter-");
let tableId = "";

// Inserted out of order, so position order and n's order differ.
const NS = [3, 7, 0, 9, 1, 8, 2, 6, 4, 5];
const nameOf = (n: number) => (n < 5 ? "alpha" : "beta");

type Runs = { runs: { id: string; mode: string; status: string; stamped: number }[] };
const runs = async () => (await uiApi<Runs>(s, "GET", `/api/tables/${tableId}/runs`)).body.runs;
const allSettled = async () => (await runs()).every((r) => r.status !== "active");

interface RowsPage {
  rows: { data: { n: number }; cells: Record<string, { executionId: string }> }[];
}
/** Each row's attempt id of group `odd`, by n. */
async function attempts(): Promise<Map<number, string | undefined>> {
  const r = await uiApi<RowsPage>(s, "GET", `/api/tables/${tableId}/rows?limit=100`);
  return new Map(r.body.rows.map((row) => [row.data.n, row.cells.odd?.executionId]));
}

const rowCount = () => s.page.locator("[data-testid=grid-row]").count();

async function addFilter(field: string, choose: (page: UiSession["page"]) => Promise<void>) {
  await s.page.click("[data-testid=filter-add]");
  const editor = s.page.getByTestId("filter-bar").getByTestId("condition-editor");
  await editor.getByTestId("condition-field").selectOption(field);
  await choose(s.page);
  await editor.getByTestId("condition-add").click();
}

beforeAll(async () => {
  await s.page.goto(s.app.signinUrl);
  await s.page.waitForURL(/\/tables$/);
  const odd = await uiWorkflow(s, "Odd fails", {
    inputs: [{ name: "n", type: "number", required: true }],
    blocks: [
      { id: "v", type: "transform", expression: "inputs.n % 2 = 1 ? $error('odd') : inputs.n" },
    ],
  });
  const t = await uiApi<{ id: string }>(s, "POST", "/api/tables", {
    name: "Find me",
    columns: [
      { id: "name", name: "Name", type: "text" },
      { id: "n", name: "N", type: "number" },
      { id: "out", name: "Out", type: "json" },
    ],
    groups: [
      {
        id: "odd",
        name: "Odd",
        kind: "workflow",
        workflowId: odd,
        inputs: { n: "n" },
        outputs: [{ columnId: "out", from: "v" }],
      },
    ],
  });
  expect(t.status).toBe(201);
  tableId = t.body.id;
  const rows = NS.map((n) => ({ data: { n, name: nameOf(n) } }));
  expect((await uiApi(s, "POST", `/api/tables/${tableId}/rows`, { rows })).status).toBe(201);
  expect((await uiApi(s, "POST", `/api/tables/${tableId}/runs`, { mode: "all" })).status).toBe(202);
  expect(await waitFor(allSettled, 30_000, 100)).toBe(true);
  await s.page.goto(`${s.app.url}/tables/${tableId}`);
  await s.page.waitForSelector("[data-testid=stream-state][data-state=live]");
  expect(
    await waitFor(async () => (await shownStatuses(s.page, "odd")).error === 5, 30_000, 100),
  ).toBe(true);
}, 240_000);

describe("finding rows in the grid", () => {
  it("the filter bar narrows the rows to those matching, and removing the chip brings them back", async () => {
    await addFilter("c:name", async (page) => {
      await page.getByTestId("filter-bar").getByTestId("condition-value").fill("beta");
    });
    await s.page.getByTestId("filter-chip").filter({ hasText: "Name is “beta”" }).waitFor();
    expect(await waitFor(async () => (await rowCount()) === 5, 20_000, 100)).toBe(true);
    expect(new Set(await shownValues(s.page, "name"))).toEqual(new Set(["beta"]));
    expect(await s.page.getByTestId("matching-count").textContent()).toBe("5 matching rows");

    // A value the column cannot hold is refused in the editor, in words, and sent nowhere.
    await addFilter("c:n", async (page) => {
      const bar = page.getByTestId("filter-bar");
      await bar.getByTestId("condition-op").selectOption("gt");
      await bar.getByTestId("condition-value").fill("many");
    });
    await s.page.getByTestId("filter-bar").getByRole("alert").waitFor();
    expect(await s.page.getByTestId("filter-chip").count()).toBe(1);
    await s.page.getByTestId("filter-bar").getByRole("button", { name: "Cancel" }).click();

    await s.page.getByTestId("filter-chip-remove").click();
    expect(await waitFor(async () => (await rowCount()) === 10, 20_000, 100)).toBe(true);
  }, 60_000);

  it("a column header sorts the rows ascending, then descending, then back to row order", async () => {
    const inOrder = NS.map(String);
    expect(await shownValues(s.page, "n")).toEqual(inOrder);
    const sortN = s.page.getByTestId("sort-n");
    const shows = (expected: string[]) =>
      waitFor(
        async () => JSON.stringify(await shownValues(s.page, "n")) === JSON.stringify(expected),
        20_000,
        100,
      );
    await sortN.click();
    expect(await shows([...NS].sort((a, b) => a - b).map(String))).toBe(true);
    expect(await sortN.getAttribute("data-dir")).toBe("asc");
    await sortN.click();
    expect(await shows([...NS].sort((a, b) => b - a).map(String))).toBe(true);
    await sortN.click();
    expect(await shows(inOrder)).toBe(true);
    expect(await s.page.getByTestId("sort-chip").count()).toBe(0);
  }, 60_000);

  it("Run failed on matching rows re-runs only the failed cells of the rows the filter shows", async () => {
    const before = await attempts();
    await addFilter("g:odd", async (page) => {
      await page.getByTestId("filter-bar").getByTestId("condition-status").selectOption("error");
    });
    await addFilter("c:name", async (page) => {
      await page.getByTestId("filter-bar").getByTestId("condition-value").fill("beta");
    });
    // Odd and beta: 5, 7 and 9.
    expect(await waitFor(async () => (await rowCount()) === 3, 20_000, 100)).toBe(true);
    expect(new Set(await shownValues(s.page, "n"))).toEqual(new Set(["5", "7", "9"]));
    await s.page.click("[data-testid=run-failed-matching]");
    expect(
      await waitFor(async () => (await runs()).some((r) => r.mode === "failed"), 20_000, 100),
    ).toBe(true);
    expect(await waitFor(allSettled, 30_000, 100)).toBe(true);
    const failed = (await runs()).find((r) => r.mode === "failed");
    expect(failed?.stamped).toBe(3);
    const after = await attempts();
    for (const n of NS) {
      const reran = after.get(n) !== before.get(n);
      expect(reran, `row n=${n}`).toBe([5, 7, 9].includes(n));
    }
    // The rows stay shown while their cells re-run (live events update them in place).
    expect(await rowCount()).toBe(3);
    for (let i = 0; i < 2; i++) await s.page.getByTestId("filter-chip-remove").first().click();
    expect(await waitFor(async () => (await rowCount()) === 10, 20_000, 100)).toBe(true);
  }, 90_000);

  it("Run ▾ › Run matching… starts a run of the rows its conditions match", async () => {
    await s.page.click("[data-testid=run-menu-odd]");
    await s.page.click("text=Run matching…");
    const dialog = s.page.getByTestId("run-matching");
    await dialog.getByTestId("condition-field").selectOption("c:n");
    await dialog.getByTestId("condition-op").selectOption("gte");
    await dialog.getByTestId("condition-value").fill("7");
    await dialog.getByTestId("condition-add").click();
    await dialog.getByTestId("run-matching-chip").filter({ hasText: "N ≥ 7" }).waitFor();
    await dialog.getByTestId("run-matching-start").click();
    expect(await waitFor(async () => (await runs()).length === 3, 20_000, 100)).toBe(true);
    expect(await waitFor(allSettled, 30_000, 100)).toBe(true);
    const latest = (await runs()).find((r) => r.mode === "all" && r.stamped !== NS.length);
    // n = 7, 8 and 9.
    expect(latest?.stamped).toBe(3);
  }, 60_000);

  it("Run ▾ › Run stale rows… runs the cells never run, not those completed within the hours given", async () => {
    const before = (await runs()).length;
    const added = [100, 102].map((n) => ({ data: { n, name: "gamma" } }));
    expect((await uiApi(s, "POST", `/api/tables/${tableId}/rows`, { rows: added })).status).toBe(
      201,
    );
    await s.page.click("[data-testid=run-menu-odd]");
    await s.page.click("text=Run stale rows…");
    const dialog = s.page.getByTestId("run-stale");
    await dialog.getByTestId("run-stale-hours").fill("0");
    expect(await dialog.getByTestId("run-stale-start").isDisabled()).toBe(true);
    await dialog.getByTestId("run-stale-hours").fill("1");
    await dialog.getByTestId("run-stale-start").click();
    expect(await waitFor(async () => (await runs()).length === before + 1, 20_000, 100)).toBe(true);
    expect(await waitFor(allSettled, 30_000, 100)).toBe(true);
    const stale = (await runs()).filter((r) => r.mode === "stale");
    // The two rows added, never run; the ten earlier ones ran minutes ago (or errored).
    expect(stale.map((r) => r.stamped)).toEqual([2]);
  }, 60_000);
});

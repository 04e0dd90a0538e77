/**
 * "Select all" past the loaded rows, in real headless Chromium against the real `npm
 * start` (5,000 rows built in one SQL statement, more than the grid loads): the header's
 * checkbox picks the loaded rows, the bar then offers all 5,000, and Run selected runs
 * them all (the run's total is 5,000, in its progress line). Under a saved view's filter
 * the bar offers the rows matching it, and Delete selected removes exactly those through
 * one bulk request (no per-row DELETE), its confirmation naming the count.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { fillRows } from "../helpers/grid-scale";
import { waitFor } from "../helpers/processes";
import {
  shoutTableBody,
  type UiSession,
  UPPER,
  uiApi,
  uiSessionOfFile,
  uiWorkflow,
} from "../helpers/ui-session";

const ROWS = 5_000;
const s: UiSession = uiSessionOfFile("cellflow-ui-select-all-");
let tableId = "";

interface RunView {
  id: string;
  stamped: number;
  stamping: boolean;
}
const runs = async () =>
  (await uiApi<{ runs: RunView[] }>(s, "GET", `/api/tables/${tableId}/runs`)).body.runs;
const rowCount = async () =>
  (await uiApi<{ rowCount: number }>(s, "GET", `/api/tables/${tableId}`)).body.rowCount;

beforeAll(async () => {
  await s.page.goto(s.app.signinUrl);
  await s.page.waitForURL(/\/tables$/);
  const wf = await uiWorkflow(s, "Upper", UPPER);
  const body = shoutTableBody("Select all", wf, [{ id: "n", name: "N", type: "number" }]);
  const t = await uiApi<{ id: string }>(s, "POST", "/api/tables", body);
  expect(t.status).toBe(201);
  tableId = t.body.id;
  await fillRows(s, tableId, ROWS, "jsonb_build_object('name', 'r' || i, 'n', i)");
}, 120_000);

async function openGrid(query = ""): Promise<void> {
  const { page } = s;
  await page.goto(`${s.app.url}/tables/${tableId}${query}`);
  await page.waitForSelector("[data-testid=stream-state][data-state=live]");
  await page.waitForSelector("[data-testid=grid-row]");
}

/** The header's checkbox, then the bar's "Select all N rows…": the bar's text after it. */
async function selectAllMatching(offer: string): Promise<string> {
  const { page } = s;
  await page.getByLabel("Select all rows").check();
  const bar = page.getByTestId("selection-bar");
  await bar.and(page.locator("[data-state=loaded]")).waitFor();
  const button = page.getByTestId("select-all-matching");
  expect(await button.textContent()).toBe(offer);
  await button.click();
  await bar.and(page.locator("[data-state=matching]")).waitFor();
  return (await bar.textContent()) ?? "";
}

describe("select all matching rows", () => {
  it("Run selected runs every row of the table, not only those loaded", async () => {
    const { page } = s;
    await openGrid();
    expect(await selectAllMatching("Select all 5,000 rows")).toContain(
      "All 5,000 rows are selected.",
    );
    // Every row's checkbox shows checked, the header's too.
    const boxes = page.locator("[data-testid=grid-row] input[type=checkbox]");
    expect(await boxes.count()).toBeGreaterThan(0);
    expect(
      await boxes.evaluateAll((els) => els.every((e) => (e as HTMLInputElement).checked)),
    ).toBe(true);

    await page.getByRole("button", { name: "Run 5,000 selected" }).click();
    // 5,000 cells: the dry run asks first.
    const dialog = page.getByRole("dialog", { name: "Start this run?" });
    await dialog.waitFor();
    expect(await dialog.getByTestId("run-estimate-rows").textContent()).toBe("5,000");
    await dialog.getByRole("button", { name: "Run", exact: true }).click();

    const stamped = async () => {
      const [run] = await runs();
      return run !== undefined && !run.stamping && run.stamped === ROWS;
    };
    expect(await waitFor(stamped, 60_000)).toBe(true);
    expect((await runs()).length).toBe(1);
    // The progress line's total is every row's cell.
    const line = page.getByTestId("run-progress").first();
    expect(
      await waitFor(async () => /\/ 5,000/.test((await line.textContent()) ?? ""), 30_000, 100),
    ).toBe(true);
  }, 180_000);

  it("under a filter, Delete selected removes exactly the matching rows in one bulk request", async () => {
    const { page } = s;
    const view = await uiApi<{ id: string }>(s, "POST", `/api/tables/${tableId}/views`, {
      name: "Past 1,000",
      where: [{ column: "n", op: "gt", value: 1_000 }],
    });
    expect(view.status).toBe(201);
    await openGrid(`?view=${view.body.id}`);
    // The view's filter is in (its count: 4,000) before the bar may offer its rows.
    await page.getByText("4,000 rows", { exact: true }).waitFor();
    expect(await selectAllMatching("Select all 4,000 rows matching the filter")).toContain(
      "All 4,000 rows matching the filter are selected.",
    );

    const requests: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes(`/api/tables/${tableId}/rows`) && r.method() !== "GET")
        requests.push(`${r.method()} ${new URL(r.url()).pathname}`);
    });
    let asked = "";
    page.once("dialog", (d) => {
      asked = d.message();
      void d.accept();
    });
    await page.getByRole("button", { name: "Delete 4,000" }).click();
    await page.getByText("Deleted 4,000 rows.").waitFor({ timeout: 60_000 });
    expect(asked).toBe("Delete 4,000 rows matching the filter? Their running cells stop.");
    expect(requests).toEqual([`POST /api/tables/${tableId}/rows/delete`]);

    expect(await rowCount()).toBe(1_000);
    const left = await uiApi<{ total: number }>(
      s,
      "GET",
      `/api/tables/${tableId}/rows?limit=1&total=true&where=${encodeURIComponent(
        JSON.stringify([{ column: "n", op: "lte", value: 1_000 }]),
      )}`,
    );
    expect(left.body.total).toBe(1_000);
    // The grid shows the view's rows gone, and the selection cleared.
    await page.getByText("0 rows", { exact: true }).waitFor();
    expect(await page.getByTestId("selection-bar").count()).toBe(0);
  }, 180_000);
});

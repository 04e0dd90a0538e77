/**
 * Per-row budgets in real headless Chromium against the real `npm start`: the budget per
 * row typed in the Run dialog is sent as `maxCreditsPerRow`, and a row whose second paid
 * call would pass it shows that cell "Over budget" (no call made) while its first group
 * is done; the table's default is set from the toolbar and shown there.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { waitFor } from "../helpers/processes";
import { websiteMetaTableBody } from "../helpers/store-tables";
import { uiApi, uiSessionOfFile } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-row-budget-");
const api = <T = Record<string, unknown>>(method: string, p: string, body?: unknown) =>
  uiApi<T>(ui, method, p, body);
let ep: Endpoint;

interface RunView {
  id: string;
  status: string;
  maxCreditsPerRow: number | null;
  creditsUsed: number | null;
}

beforeAll(async () => {
  ep = await startEndpoint();
  ep.on("/site", async () => ({
    status: 200,
    body: "<html><head><title>Site</title></head></html>",
    headers: { "content-type": "text/html" },
  }));
  await ui.page.goto(ui.app.signinUrl);
  await ui.page.waitForURL(/\/tables$/);
}, 60_000);
afterAll(() => ep?.close());

/** Two paid website_meta groups: `meta` on `url`, then `second` on `url2`. */
function twoGroupBody() {
  const meta = websiteMetaTableBody("Budgeted", { dependsOn: ["url"] });
  const second = websiteMetaTableBody("Budgeted", {
    id: "second",
    name: "Second",
    inputs: { url: "url2" },
    outputs: [{ columnId: "title2", from: "title" }],
    dependsOn: ["url2", "title"],
  });
  return {
    ...meta,
    columns: [
      ...meta.columns,
      { id: "url2", name: "URL 2", type: "text" },
      { id: "title2", name: "Title 2", type: "text" },
    ],
    groups: [...meta.groups, ...second.groups],
  };
}

describe("per-row budgets in the grid", () => {
  it("the Run dialog's max credits per row leaves each row's second paid cell 'Over budget'", async () => {
    const t = await api<{ id: string }>("POST", "/api/tables", twoGroupBody());
    expect(t.status).toBe(201);
    const tableId = t.body.id;
    const rows = Array.from({ length: 2 }, (_, i) => ({
      data: { url: `${ep.url}/site?a=${i}`, url2: `${ep.url}/site?b=${i}` },
    }));
    expect((await api("POST", `/api/tables/${tableId}/rows`, { rows })).status).toBe(201);

    const { page } = ui;
    await page.goto(`${ui.app.url}/tables/${tableId}`);
    await page.waitForSelector("[data-testid=group-header-second]");
    await page.waitForSelector("[data-testid=stream-state][data-state=live]");
    await page.click("[data-testid=run-all-menu]");
    await page.click("text=Run all rows");
    const dialog = page.getByRole("dialog", { name: "Start this run?" });
    await dialog.waitFor();
    expect(await dialog.getByTestId("run-estimate-credits").textContent()).toBe("4");
    const perRow = dialog.getByLabel("Max credits per row (optional)");
    await perRow.fill("0");
    expect(await dialog.getByRole("button", { name: "Run", exact: true }).isDisabled()).toBe(true);
    await perRow.fill("1");
    await dialog.getByRole("button", { name: "Run", exact: true }).click();

    const overBudget = page.locator("[data-testid=cell-second]", { hasText: "Over budget" });
    expect(await waitFor(async () => (await overBudget.count()) === 2, 30_000)).toBe(true);
    expect(await page.locator("[data-testid=cell-meta]", { hasText: "Done" }).count()).toBe(2);
    // No second call was made.
    expect(ep.hitsOf("/site").filter((h) => h.query.has("b"))).toHaveLength(0);
    const runs = (await api<{ runs: RunView[] }>("GET", `/api/tables/${tableId}/runs`)).body.runs;
    expect(runs).toEqual([
      expect.objectContaining({ status: "completed", maxCreditsPerRow: 1, creditsUsed: 2 }),
    ]);
  }, 120_000);

  it("the toolbar sets and clears the table's default budget per row", async () => {
    const t = await api<{ id: string }>("POST", "/api/tables", twoGroupBody());
    const tableId = t.body.id;
    const { page } = ui;
    await page.goto(`${ui.app.url}/tables/${tableId}`);
    const button = page.getByTestId("row-budget");
    await button.waitFor();
    expect(await button.textContent()).toBe("No row budget");
    await button.click();
    const dialog = page.getByRole("dialog", { name: "Budget per row" });
    await dialog.getByLabel("Max credits per row").fill("2.5");
    await dialog.getByRole("button", { name: "Save" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(
      await waitFor(async () => (await button.textContent()) === "Row budget: 2.5 credits", 10_000),
    ).toBe(true);
    const got = await api<{ maxCreditsPerRow: number | null }>("GET", `/api/tables/${tableId}`);
    expect(got.body.maxCreditsPerRow).toBe(2.5);
    await button.click();
    await dialog.getByLabel("Max credits per row").fill("");
    await dialog.getByRole("button", { name: "Save" }).click();
    expect(
      await waitFor(async () => (await button.textContent()) === "No row budget", 10_000),
    ).toBe(true);
  }, 60_000);
});

/**
 * Resume and attempt history in the grid, in real headless Chromium against the real
 * `npm start`: Run ▾ › Resume failed starts the errored cells again at the block that
 * failed (the endpoint of the block before it is not called again), and a cell's detail
 * panel lists its attempts, newest first, the resumed one naming the attempt it resumed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { waitFor } from "../helpers/processes";
import { shownStatuses, uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-attempts-");
let ep: Endpoint;

beforeAll(async () => {
  ep = await startEndpoint();
});
afterAll(() => ep?.close());

const ROWS = 3;

describe("resume and attempts in the grid", () => {
  let tableId = "";

  it("Run ▾ › Resume failed re-runs the errored cells from the block that failed", async () => {
    // The second call fails until the test "fixes" its endpoint.
    let broken = true;
    ep.on("/first", async () => ({ status: 200, body: { fetched: true } }));
    ep.on("/second", async () =>
      broken ? { status: 503, body: { error: "down" } } : { status: 200, body: { saved: true } },
    );
    const wf = await uiWorkflow(ui, "Fetch then save", {
      inputs: [],
      blocks: [
        { id: "fetch", type: "http", method: "GET", url: `${ep.url}/first`, next: "save" },
        { id: "save", type: "http", method: "POST", url: `${ep.url}/second` },
      ],
    });
    const t = await uiApi<{ id: string }>(ui, "POST", "/api/tables", {
      name: "Resumable",
      columns: [{ id: "out", name: "Out", type: "json" }],
      groups: [
        {
          id: "sync",
          name: "Sync",
          kind: "workflow",
          workflowId: wf,
          outputs: [{ columnId: "out", from: "save.body" }],
        },
      ],
    });
    tableId = t.body.id;
    await uiApi(ui, "POST", `/api/tables/${tableId}/rows`, {
      rows: Array.from({ length: ROWS }, () => ({ data: {} })),
    });
    type Runs = { runs: { mode: string; status: string; stamped: number }[] };
    const runs = async () =>
      (await uiApi<Runs>(ui, "GET", `/api/tables/${tableId}/runs`)).body.runs;
    await uiApi(ui, "POST", `/api/tables/${tableId}/runs`, { mode: "all" });
    expect(
      await waitFor(async () => (await runs()).every((r) => r.status === "completed"), 30_000, 100),
    ).toBe(true);

    const { page } = ui;
    await page.goto(ui.app.signinUrl);
    await page.waitForURL(/\/tables$/);
    await page.goto(`${ui.app.url}/tables/${tableId}`);
    await page.waitForSelector("[data-testid=group-header-sync]");
    expect(
      await waitFor(async () => (await shownStatuses(page, "sync")).error === ROWS, 30_000, 100),
    ).toBe(true);
    broken = false;
    await page.click("[data-testid=run-menu-sync]");
    await page.click("text=Resume failed");
    expect(
      await waitFor(
        async () => (await runs()).some((r) => r.mode === "failed" && r.status === "completed"),
        30_000,
        100,
      ),
    ).toBe(true);
    expect(
      await waitFor(
        async () => (await shownStatuses(page, "sync")).completed === ROWS,
        30_000,
        100,
      ),
    ).toBe(true);
    // Each row fetched once (the failed attempt's recorded answer was reused) and saved twice.
    expect(ep.hitsOf("/first")).toHaveLength(ROWS);
    expect(ep.hitsOf("/second")).toHaveLength(2 * ROWS);
  }, 120_000);

  it("a cell's detail panel lists its attempts, newest first, with the one it resumed from", async () => {
    const { page } = ui;
    await page.locator("[data-testid=cell-sync] [data-status=completed] button").first().click();
    const dialog = page.getByRole("dialog");
    const rows = dialog.locator("[data-testid=attempt-row]");
    expect(await waitFor(async () => (await rows.count()) === 2, 10_000, 100)).toBe(true);
    expect(await rows.nth(0).getAttribute("data-status")).toBe("completed");
    expect(await rows.nth(1).getAttribute("data-status")).toBe("error");
    // The resumed attempt names the failed one, whose error is shown on its line.
    const failedId = await rows.nth(1).locator("td").first().getAttribute("title");
    expect(await rows.nth(0).getAttribute("data-resumed-from")).toBe(failedId);
    expect(await rows.nth(0).textContent()).toContain("resumed from");
    expect(await rows.nth(1).textContent()).toMatch(/503/);
    await dialog.getByRole("button", { name: "Close" }).click();
    await dialog.waitFor({ state: "detached" });
  }, 60_000);
});

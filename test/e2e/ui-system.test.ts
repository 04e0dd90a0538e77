/**
 * The System page in real headless Chromium against the real `npm start` (issue 34): it
 * is linked from the app's sections, shows a run in progress with its cells done moving
 * up, a rate and an ETA, then the run gone once it finished, the carriers and queue, and
 * the workspace's cell errors, each a link that opens its cell's details in its table.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/processes";
import { uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-system-");

const ROWS = 8;
const WAIT_MS = 900;

/** A table of `rows` empty rows whose group `g` runs `workflowId` into `out`. */
async function table(name: string, workflowId: string, rows: number): Promise<string> {
  const t = await uiApi<{ id: string }>(ui, "POST", "/api/tables", {
    name,
    columns: [{ id: "out", name: "Out", type: "json" }],
    groups: [
      {
        id: "g",
        name: `${name} group`,
        kind: "workflow",
        workflowId,
        outputs: [{ columnId: "out", from: "last" }],
        autoRun: false,
      },
    ],
  });
  expect(t.status).toBe(201);
  const r = await uiApi(ui, "POST", `/api/tables/${t.body.id}/rows`, {
    rows: Array.from({ length: rows }, () => ({ data: {} })),
  });
  expect(r.status).toBe(201);
  return t.body.id;
}

async function runOf(tableId: string): Promise<string> {
  // One row at a time, so the run lasts ROWS × WAIT_MS whatever the worker's slots.
  const r = await uiApi<{ dispatchId: string }>(ui, "POST", `/api/tables/${tableId}/runs`, {
    mode: "all",
    window: 1,
  });
  expect(r.status).toBe(202);
  return r.body.dispatchId;
}

const runEnded = (tableId: string, id: string) =>
  waitFor(
    async () =>
      (await uiApi<{ status: string }>(ui, "GET", `/api/tables/${tableId}/runs/${id}`)).body
        .status !== "active",
    60_000,
    100,
  );

describe("the System page", () => {
  let failingId = "";

  it("shows a run in progress with its numbers moving, then the run finished", async () => {
    const { page } = ui;
    const slow = await uiWorkflow(ui, "Slow", {
      blocks: [
        { id: "pause", type: "wait", ms: WAIT_MS, next: "last" },
        { id: "last", type: "transform", expression: "'ok'" },
      ],
    });
    const failing = await uiWorkflow(ui, "Failing", {
      blocks: [{ id: "last", type: "fail", message: "the provider said no" }],
    });
    const slowId = await table("Slow", slow, ROWS);
    failingId = await table("Failing", failing, 1);
    const failed = await runOf(failingId);
    expect(await runEnded(failingId, failed)).toBe(true);

    await page.goto(ui.app.signinUrl);
    await page.waitForURL(/\/tables$/);
    // The section is in the app's navigation.
    await page.click("nav.nav >> text=System");
    await page.waitForURL(/\/system$/);
    await page.waitForSelector("[data-testid=system-no-runs]");

    const run = await runOf(slowId);
    const line = page.locator(`[data-testid=system-run][data-run-id="${run}"]`);
    const doneNow = async () => Number((await line.getAttribute("data-done")) ?? -1);
    // Under way: some cells done, not all.
    expect(
      await waitFor(
        async () => (await line.count()) === 1 && (await doneNow()) > 0 && (await doneNow()) < ROWS,
        60_000,
        100,
      ),
    ).toBe(true);
    const first = await doneNow();
    expect(await line.getAttribute("data-total")).toBe(String(ROWS));
    expect(await line.getByTestId("system-run-done").textContent()).toContain(`/ ${ROWS}`);
    expect(await line.getByTestId("system-run-rate").textContent()).toMatch(/^[\d.]+ cells\/s$/);
    expect(await line.getByTestId("system-run-rate").textContent()).not.toBe("0 cells/s");
    expect(await line.getByTestId("system-run-eta").textContent()).toMatch(/^\d+(s|m \d\ds)$/);
    // One row in flight: one carrier, the rest of the run queued behind the window.
    expect(await page.getByTestId("system-carriers").textContent()).toMatch(/^[01]$/);
    // The page reads again by itself: the numbers move without a reload.
    expect(
      await waitFor(
        async () => (await line.count()) === 0 || (await doneNow()) > first,
        30_000,
        100,
      ),
    ).toBe(true);
    // The run finishes: it leaves the list.
    expect(await runEnded(slowId, run)).toBe(true);
    await page.waitForSelector("[data-testid=system-no-runs]", { timeout: 30_000 });
    expect(await page.getByTestId("system-queue").textContent()).toBe("0");
  }, 180_000);

  it("lists the cell error with a link that opens the cell's details in its table", async () => {
    const { page } = ui;
    const error = page.locator("[data-testid=system-error]").first();
    await error.waitFor();
    expect(await error.textContent()).toContain("the provider said no");
    expect(await error.textContent()).toContain("Failing group");
    const rowId = await error.getAttribute("data-row-id");
    await error.getByTestId("system-error-link").click();
    await page.waitForURL(new RegExp(`/tables/${failingId}\\?row=${rowId}&group=g$`));
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("“Failing group” failed");
    expect(await dialog.textContent()).toContain("the provider said no");
  }, 60_000);
});

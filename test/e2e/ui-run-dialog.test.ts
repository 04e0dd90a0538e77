/**
 * The Run dialog in real headless Chromium against the real `npm start`: a paid run asks
 * first, showing its dry-run figures (rows, cells, estimated credits; "at least" when
 * a foreach keeps some calls from being counted), and starts only on Run; the credit cap
 * typed there is sent as `maxCredits`, and the run it halts says so in its progress line
 * and the notice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { waitFor } from "../helpers/processes";
import { websiteMetaTableBody } from "../helpers/store-tables";
import { uiApi, uiSessionOfFile } from "../helpers/ui-session";

// website_meta fetches the test's loopback endpoint (the test env allows private addresses).
const ui = uiSessionOfFile("cellflow-ui-dialog-");
const api = <T = Record<string, unknown>>(method: string, p: string, body?: unknown) =>
  uiApi<T>(ui, method, p, body);
let ep: Endpoint;

interface RunView {
  id: string;
  status: string;
  haltReason: string | null;
  maxCredits: number | null;
  creditsUsed: number | null;
  counts: { queued: number; running: number };
}
const runs = async (tableId: string) =>
  (await api<{ runs: RunView[] }>("GET", `/api/tables/${tableId}/runs`)).body.runs;

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

/** Opens the table and picks Run ▾ › `item`. */
async function runFromMenu(tableId: string, groupId: string, item: string): Promise<void> {
  const { page } = ui;
  await page.goto(`${ui.app.url}/tables/${tableId}`);
  await page.waitForSelector(`[data-testid=group-header-${groupId}]`);
  await page.waitForSelector("[data-testid=stream-state][data-state=live]");
  await page.click("[data-testid=run-all-menu]");
  await page.click(`text=${item}`);
}

describe("the Run dialog", () => {
  it("a paid run shows its dry-run figures, and the credit cap typed there halts it, shown as such", async () => {
    const t = await api<{ id: string }>("POST", "/api/tables", websiteMetaTableBody("Sites"));
    expect(t.status).toBe(201);
    const tableId = t.body.id;
    const rows = Array.from({ length: 6 }, (_, i) => ({ data: { url: `${ep.url}/site?i=${i}` } }));
    expect((await api("POST", `/api/tables/${tableId}/rows`, { rows })).status).toBe(201);

    await runFromMenu(tableId, "meta", "Run all rows");
    const dialog = ui.page.getByRole("dialog", { name: "Start this run?" });
    await dialog.waitFor();
    const figure = (id: string) => dialog.getByTestId(`run-estimate-${id}`).textContent();
    expect(await figure("rows")).toBe("6");
    expect(await figure("cells")).toBe("6");
    expect(await figure("credits")).toBe("6");
    // Nothing starts before the answer.
    expect(await runs(tableId)).toEqual([]);

    await dialog.getByLabel("Credit cap (optional)").fill("0");
    expect(await dialog.getByRole("button", { name: "Run", exact: true }).isDisabled()).toBe(true);
    await dialog.getByLabel("Credit cap (optional)").fill("2");
    await dialog.getByRole("button", { name: "Run", exact: true }).click();

    // The halt lands while admitted calls may still be out: it is judged once they ended
    // (the one under the cap charged, those past it refused), not at the halt itself.
    const ended = (r: RunView) =>
      r.status === "halted" && r.counts.running === 0 && r.counts.queued === 0;
    expect(await waitFor(async () => (await runs(tableId)).some(ended), 30_000)).toBe(true);
    expect(await runs(tableId)).toEqual([
      expect.objectContaining({
        status: "halted",
        haltReason: "run_credit_cap",
        maxCredits: 2,
        creditsUsed: 2,
      }),
    ]);
    const end = ui.page.locator("[data-testid=run-end][data-halt-reason=run_credit_cap]");
    await end.waitFor();
    // The halt can land while the last admitted call is still out (reserved, not yet
    // charged): the line first says "1 of 2", and the cell event of that call's answer
    // refreshes it to what the run was charged.
    const settled = "halted: credit cap reached (2 of 2 credits)";
    expect(await waitFor(async () => (await end.textContent()) === settled, 10_000)).toBe(true);
    const notice = ui.page.getByTestId("limit-notice");
    await notice.waitFor();
    expect(await notice.textContent()).toContain("Credit cap reached");
    expect(ep.hitsOf("/site")).toHaveLength(2);
  }, 120_000);

  it("says 'at least' when a foreach keeps calls from being counted, and Cancel starts nothing", async () => {
    const workflow = async (name: string, blocks: unknown[]) => {
      const wf = await api<{ id: string }>("POST", "/api/workflows", {
        name,
        definition: { inputs: [{ name: "url", type: "text" }], blocks },
      });
      expect(wf.status).toBe(201);
      return wf.body.id;
    };
    const child = await workflow("Meta of one", [
      {
        id: "meta",
        type: "enrichment",
        enrichmentId: "website_meta",
        inputs: { url: "inputs.url" },
      },
    ]);
    const loop = await workflow("Meta of each", [
      { id: "each", type: "foreach", items: "[inputs.url]", workflowId: child },
    ]);
    const t = await api<{ id: string }>("POST", "/api/tables", {
      name: "Looped",
      columns: [{ id: "url", name: "URL", type: "text" }],
      groups: [
        { id: "loop", name: "Loop", kind: "workflow", workflowId: loop, inputs: { url: "url" } },
      ],
    });
    expect(t.status).toBe(201);
    const tableId = t.body.id;
    const rows = Array.from({ length: 3 }, (_, i) => ({ data: { url: `${ep.url}/site?l=${i}` } }));
    expect((await api("POST", `/api/tables/${tableId}/rows`, { rows })).status).toBe(201);

    await runFromMenu(tableId, "loop", "Run all rows");
    const dialog = ui.page.getByRole("dialog", { name: "Start this run?" });
    await dialog.waitFor();
    expect(await dialog.getByTestId("run-estimate-cells").textContent()).toBe("3");
    expect(await dialog.getByTestId("run-estimate-credits").textContent()).toBe("at least 0");
    expect(await dialog.textContent()).toContain("Not counted ahead: Loop");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(await runs(tableId)).toEqual([]);
  }, 60_000);
});

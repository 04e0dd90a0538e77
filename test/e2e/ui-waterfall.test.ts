/**
 * A waterfall group in real headless Chromium against the real `npm start`: created
 * through the API over a loopback company provider, run, and each cell shows live which
 * step won; the group editor opens it with its steps, and saving it unchanged keeps it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { waitFor } from "../helpers/processes";
import { uiApi, uiSessionOfFile } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-waterfall-");
const api = <T = Record<string, unknown>>(method: string, p: string, body?: unknown) =>
  uiApi<T>(ui, method, p, body);

// company_lookup asks the test's loopback endpoint (the test env allows private addresses).
let ep: Endpoint;
beforeAll(async () => {
  ep = await startEndpoint();
  ep.on("/company", async (hit) => {
    const domain = hit.query.get("domain") ?? "";
    return domain.startsWith("found-")
      ? { status: 200, body: { name: `Company of ${domain}` } }
      : { status: 404, body: { error: "no such company" } };
  });
});
afterAll(async () => {
  await ep.close();
});

const group = {
  id: "company",
  name: "Company",
  kind: "waterfall",
  steps: [
    { enrichmentId: "company_lookup", inputs: { domain: "d1" }, outputs: { name: "name" } },
    { enrichmentId: "company_lookup", inputs: { domain: "d2" }, outputs: { name: "name" } },
  ],
  outputs: [{ columnId: "name", from: "name" }],
  dependsOn: [],
  autoRun: false,
};

describe("a waterfall group in the grid", () => {
  it("each cell shows the step that won, live; the editor opens it with its steps", async () => {
    const { page } = ui;
    await page.goto(ui.app.signinUrl);
    await page.waitForURL(/\/tables$/);
    const secret = await api("PUT", "/api/secrets/COMPANY_LOOKUP_URL_1", {
      value: `${ep.url}/company`,
    });
    expect(secret.status).toBe(200);
    const t = await api<{ id: string }>("POST", "/api/tables", {
      name: "Waterfall",
      columns: ["d1", "d2", "name"].map((id) => ({ id, name: id, type: "text" })),
      groups: [group],
    });
    expect(t.status).toBe(201);
    const tableId = t.body.id;
    const inserted = await api("POST", `/api/tables/${tableId}/rows`, {
      rows: [
        { data: { d1: "none-a.example", d2: "found-a.example" } },
        { data: { d1: "found-b.example", d2: "found-b2.example" } },
      ],
    });
    expect(inserted.status).toBe(201);
    await page.goto(`${ui.app.url}/tables/${tableId}`);
    await page.waitForSelector("[data-testid=stream-state][data-state=live]");
    await page.waitForSelector("[data-testid=group-header-company]");

    const run = await api("POST", `/api/tables/${tableId}/runs`, { mode: "all" });
    expect(run.status).toBe(202);
    const labels = () =>
      page
        .locator("[data-testid=grid-row] [data-testid=cell-company] [data-status]")
        .allTextContents();
    expect(
      await waitFor(
        async () => {
          // Both rows drawn and both found ([].every would hold before the grid drew any).
          const now = await labels();
          return now.length === 2 && now.every((l) => l.startsWith("Found"));
        },
        60_000,
        200,
      ),
    ).toBe(true);
    expect(await labels()).toEqual([
      "Found · step 2 (company_lookup)",
      "Found · step 1 (company_lookup)",
    ]);
    // Read again from the rows (not the live events): the same.
    await page.reload();
    await page.waitForSelector("[data-testid=stream-state][data-state=live]");
    expect(await waitFor(async () => (await labels()).length === 2, 20_000, 200)).toBe(true);
    expect(await labels()).toEqual([
      "Found · step 2 (company_lookup)",
      "Found · step 1 (company_lookup)",
    ]);
    // The second step of row 1 was the only call for its d2; row 2's d2 never asked.
    expect(
      ep.hitsOf("/company").filter((h) => h.query.get("domain") === "found-b2.example"),
    ).toHaveLength(0);

    await page.getByTestId("group-header-company").getByTitle("Edit group").click();
    const editor = page.getByTestId("group-editor");
    await editor.waitFor();
    expect(await editor.getByTestId("waterfall-step").count()).toBe(2);
    expect(await editor.getByLabel("Step 2 input domain: column").inputValue()).toBe("d2");
    await editor.locator("button[type=submit]").click();
    await editor.waitFor({ state: "detached" });
    const saved = await api<{ groups: unknown[] }>("GET", `/api/tables/${tableId}`);
    expect(saved.body.groups).toEqual([group]);
  }, 180_000);
});

/**
 * Spend control in real headless Chromium against one real `npm start` (issue 30's
 * browser test), scenario by scenario on the same server and page:
 * - a run condition built in the group editor ("Only run if" › Tier is "pro", with the
 *   filter bar's condition builder): the header says the group has one, and the row whose
 *   tier is not "pro" ends "Condition not met" (output blank) while the other runs;
 * - the table's auto-run switch: off asks nothing and inserted rows stay unrun; on asks
 *   which backfill, and "Leave existing rows as they are" starts nothing while "Run the
 *   auto-run groups on rows that never ran" starts one run of mode `new` that fills them;
 * - a waterfall group: each cell shows live (and after a reload) which step won, and the
 *   group editor opens it with its steps;
 * - per-row budgets: the Run dialog's "max credits per row" leaves each row's second paid
 *   cell "Over budget" (no call made), and the toolbar sets the table's default;
 * - the group headers' progress bars: read from `GET /progress` when the grid opens, moved
 *   by `progress` events while a run goes (the done share grows step by step), full at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { waitFor } from "../helpers/processes";
import { websiteMetaTableBody } from "../helpers/store-tables";
import { shoutTableBody, UPPER, uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-spend-");
const api = <T = Record<string, unknown>>(method: string, p: string, body?: unknown) =>
  uiApi<T>(ui, method, p, body);

interface Row {
  id: string;
  data: Record<string, unknown>;
  cells: Record<string, { status: string; outcome: string | null } | undefined>;
}
const rows = async (tableId: string) =>
  (await api<{ rows: Row[] }>("GET", `/api/tables/${tableId}/rows`)).body.rows;

// Run conditions: from the scenario that was test/e2e/ui-run-condition.test.ts.
describe("Run conditions", () => {
  describe("a run condition in the group editor", () => {
    it("builds 'Only run if Tier is pro'; the other row's cell ends 'Condition not met'", async () => {
      const { page } = ui;
      await page.goto(ui.app.signinUrl);
      await page.waitForURL(/\/tables$/);
      const upper = await uiWorkflow(ui, "Upper", UPPER);
      const t = await api<{ id: string }>(
        "POST",
        "/api/tables",
        shoutTableBody("Gated", upper, [{ id: "tier", name: "Tier", type: "text" }]),
      );
      expect(t.status).toBe(201);
      const tableId = t.body.id;
      const ins = await api<{ rows: { id: string }[] }>("POST", `/api/tables/${tableId}/rows`, {
        rows: [{ data: { name: "ada", tier: "pro" } }, { data: { name: "bob", tier: "free" } }],
      });
      expect(ins.status).toBe(201);
      await page.goto(`${ui.app.url}/tables/${tableId}`);
      await page.waitForSelector("[data-testid=stream-state][data-state=live]");
      expect(await page.getByTestId("run-condition-shout").count()).toBe(0);

      // The group editor: Only run if › Tier is "pro", with the filter bar's builder.
      await page.getByTestId("group-header-shout").getByTitle("Edit group").click();
      const editor = page.getByTestId("group-editor");
      await editor.waitFor();
      const section = editor.getByTestId("group-run-if");
      await section.getByTestId("run-if-add").click();
      const builder = section.getByTestId("condition-editor");
      // Only columns, and never the group's own output.
      const fields = await builder
        .getByTestId("condition-field")
        .locator("option")
        .allTextContents();
      expect(fields).toEqual(["Name", "Tier"]);
      await builder.getByTestId("condition-field").selectOption("c:tier");
      await builder.getByTestId("condition-op").selectOption("eq");
      await builder.getByTestId("condition-value").fill("pro");
      await builder.getByTestId("condition-add").click();
      await section.getByTestId("run-if-chip").filter({ hasText: "Tier is “pro”" }).waitFor();
      // Adding the condition did not save the group: the editor is still open.
      expect(await editor.isVisible()).toBe(true);
      await editor.getByRole("button", { name: "Save group" }).click();
      await editor.waitFor({ state: "detached" });

      const saved = await api<{ groups: { runIf?: unknown }[] }>("GET", `/api/tables/${tableId}`);
      expect(saved.body.groups[0]?.runIf).toEqual([{ column: "tier", op: "eq", value: "pro" }]);
      const badge = page.getByTestId("run-condition-shout");
      await badge.waitFor();
      expect(await badge.getAttribute("title")).toBe("Runs only if Tier is “pro”");

      // A run: ada's cell runs, bob's ends "Condition not met" with nothing written.
      const run = await api<{ dispatchId: string }>("POST", `/api/tables/${tableId}/runs`, {
        mode: "all",
      });
      expect(run.status).toBe(202);
      const notMet = page.locator('[data-group=shout][data-outcome="condition_not_met"]');
      await notMet.waitFor({ timeout: 30_000 });
      expect(await notMet.textContent()).toContain("Condition not met");
      expect(await notMet.count()).toBe(1);
      await page.locator('[data-group=shout][data-outcome="ok"]').waitFor({ timeout: 30_000 });
      const settled = await waitFor(
        async () => (await rows(tableId)).every((r) => r.cells.shout?.status === "completed"),
        30_000,
      );
      expect(settled).toBe(true);
      const byName = new Map((await rows(tableId)).map((r) => [r.data.name, r]));
      expect(byName.get("ada")?.data.loud).toBe("ADA");
      expect(byName.get("ada")?.cells.shout?.outcome).toBe("ok");
      expect(byName.get("bob")?.data.loud).toBeUndefined();
      expect(byName.get("bob")?.cells.shout?.outcome).toBe("condition_not_met");
    }, 180_000);
  });
});

// The auto-run switch: from the scenario that was test/e2e/ui-auto-run-switch.test.ts.
describe("The auto-run switch", () => {
  const runs = async (tableId: string) =>
    (await api<{ runs: { id: string; mode: string }[] }>("GET", `/api/tables/${tableId}/runs`)).body
      .runs;
  const autoRun = async (tableId: string) =>
    (await api<{ autoRun: boolean }>("GET", `/api/tables/${tableId}`)).body.autoRun;

  describe("the auto-run switch in the toolbar", () => {
    it("off asks nothing; on asks which backfill, and each choice does what it says", async () => {
      const { page } = ui;
      await page.goto(ui.app.signinUrl);
      await page.waitForURL(/\/tables$/);
      const upper = await uiWorkflow(ui, "Upper", UPPER);
      const t = await api<{ id: string }>("POST", "/api/tables", {
        name: "Switched",
        columns: ["src", "a"].map((id) => ({ id, name: id, type: "text" })),
        groups: [
          {
            id: "ga",
            name: "GA",
            kind: "workflow",
            workflowId: upper,
            inputs: { v: "src" },
            outputs: [{ columnId: "a", from: "out" }],
            dependsOn: ["src"],
            autoRun: true,
          },
        ],
      });
      expect(t.status).toBe(201);
      const tableId = t.body.id;
      await page.goto(`${ui.app.url}/tables/${tableId}`);
      await page.waitForSelector("[data-testid=stream-state][data-state=live]");

      const toggle = page.getByRole("switch", { name: /Auto-run/ });
      expect(await toggle.isChecked()).toBe(true);
      await toggle.click();
      expect(await waitFor(async () => (await autoRun(tableId)) === false, 10_000)).toBe(true);
      expect(await page.getByRole("dialog").count()).toBe(0);
      expect(await toggle.isChecked()).toBe(false);

      const insert = (src: string) =>
        api("POST", `/api/tables/${tableId}/rows`, { rows: [{ data: { src } }] });
      expect((await insert("one")).status).toBe(201);
      expect((await rows(tableId)).map((r) => r.cells)).toEqual([{}]);

      // On, leaving existing rows: nothing starts.
      await toggle.click();
      const dialog = page.getByRole("dialog", { name: "Turn auto-run back on" });
      await dialog.waitFor();
      await dialog.getByRole("button", { name: "Leave existing rows as they are" }).click();
      expect(await waitFor(async () => (await autoRun(tableId)) === true, 10_000)).toBe(true);
      await dialog.waitFor({ state: "detached" });
      expect(await toggle.isChecked()).toBe(true);
      expect(await runs(tableId)).toEqual([]);
      expect((await rows(tableId)).map((r) => r.data)).toEqual([{ src: "one" }]);

      // Off again, one more row, then on with the backfill: one run of mode new fills both.
      await toggle.click();
      expect(await waitFor(async () => (await autoRun(tableId)) === false, 10_000)).toBe(true);
      expect((await insert("two")).status).toBe(201);
      await toggle.click();
      await dialog.waitFor();
      await dialog
        .getByRole("button", { name: "Run the auto-run groups on rows that never ran" })
        .click();
      expect(await waitFor(async () => (await autoRun(tableId)) === true, 10_000)).toBe(true);
      const filled = await waitFor(
        async () =>
          (await rows(tableId)).every((r) => r.data.a === String(r.data.src).toUpperCase()),
        30_000,
      );
      expect(filled, JSON.stringify(await rows(tableId))).toBe(true);
      const started = await runs(tableId);
      expect(started).toHaveLength(1);
      expect(started[0]?.mode).toBe("new");
    }, 180_000);
  });
});

// Waterfall groups: from the scenario that was test/e2e/ui-waterfall.test.ts.
describe("Waterfall groups", () => {
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
});

// Per-row budgets: from the scenario that was test/e2e/ui-row-budget.test.ts.
describe("Per-row budgets", () => {
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
      expect(await dialog.getByRole("button", { name: "Run", exact: true }).isDisabled()).toBe(
        true,
      );
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
        await waitFor(
          async () => (await button.textContent()) === "Row budget: 2.5 credits",
          10_000,
        ),
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
});

// Progress bars: from the scenario that was test/e2e/ui-progress-bars.test.ts.
describe("Progress bars", () => {
  const ROWS = 24;

  describe("the group headers' progress bars", () => {
    it("move while a run goes: the done share grows from none to all", async () => {
      const { page } = ui;
      await page.goto(ui.app.signinUrl);
      await page.waitForURL(/\/tables$/);
      const slow = await uiWorkflow(ui, "Slow", {
        inputs: [],
        blocks: [
          { id: "pause", type: "wait", ms: 700, next: "out" },
          { id: "out", type: "transform", expression: "'done'" },
        ],
      });
      const t = await api<{ id: string }>("POST", "/api/tables", {
        name: "Progress",
        columns: [{ id: "a", name: "a", type: "text" }],
        groups: [
          {
            id: "gs",
            name: "Slow",
            kind: "workflow",
            workflowId: slow,
            outputs: [{ columnId: "a", from: "out" }],
          },
        ],
      });
      expect(t.status).toBe(201);
      const tableId = t.body.id;
      const inserted = await api("POST", `/api/tables/${tableId}/rows`, {
        rows: Array.from({ length: ROWS }, () => ({ data: {} })),
      });
      expect(inserted.status).toBe(201);
      await page.goto(`${ui.app.url}/tables/${tableId}`);
      await page.waitForSelector("[data-testid=stream-state][data-state=live]");
      const bar = page.getByTestId("group-progress-gs");
      await bar.waitFor();
      const share = async (part: "done" | "active") =>
        Number(await bar.getAttribute(`data-${part}`));
      expect(await share("done")).toBe(0);

      // Three rows at a time, 0.7 s each: the run takes several seconds, so several events.
      const run = await api("POST", `/api/tables/${tableId}/runs`, { mode: "all", window: 3 });
      expect(run.status).toBe(202);
      const seen: number[] = [];
      let sawActive = false;
      const finished = await waitFor(async () => {
        const done = await share("done");
        if (seen.at(-1) !== done) seen.push(done);
        if ((await share("active")) > 0) sawActive = true;
        return done === 1;
      }, 60_000);
      expect(finished, `done shares seen: ${seen.join(", ")}`).toBe(true);
      expect(sawActive).toBe(true);
      // Not one jump from none to all: shares in between, never going back.
      expect(seen.filter((s) => s > 0 && s < 1).length, seen.join(", ")).toBeGreaterThanOrEqual(2);
      expect([...seen].sort((a, b) => a - b)).toEqual(seen);
      expect(await share("active")).toBe(0);
    }, 180_000);
  });
});

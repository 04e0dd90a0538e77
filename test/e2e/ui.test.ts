/**
 * The web UI end to end, in real headless Chromium against the real `npm start`: sign in
 * (form and printed link), import a CSV, add a workflow group, run it and watch every
 * cell complete through live events (no reload), stop a long run, edit an input and see
 * its dependent re-run, approve a paused cell, survive a dropped stream, list the
 * workflows and the enrichments. A screenshot of the grid mid-run is taken (and kept
 * under docs/ with SAVE_SCREENSHOTS=1).
 */
import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { type Started, startCellflow, stopCellflow } from "../helpers/npm-start";
import { waitFor } from "../helpers/processes";
import { shownStatuses, uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const root = path.resolve(import.meta.dirname, "../..");
const ui = uiSessionOfFile("cellflow-ui-");
const { dataDir } = ui;

let app: Started;
let browser: Browser;
let page: Page;
beforeAll(() => {
  ({ app, browser, page } = ui);
});

const api = <T = Record<string, unknown>>(method: string, p: string, body?: unknown) =>
  uiApi<T>(ui, method, p, body);
const workflow = (name: string, definition: unknown) => uiWorkflow(ui, name, definition);
/** Cell states shown in the grid for one group, by status. */
const shown = (groupId: string) => shownStatuses(page, groupId);

interface RowsPage {
  rows: { id: string; data: Record<string, unknown>; cells: Record<string, { status: string }> }[];
  nextCursor: string | null;
}

async function cellCounts(tableId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let cursor: string | null = null;
  do {
    const q: string = `limit=1000${cursor ? `&cursor=${cursor}` : ""}`;
    const r: { body: RowsPage } = await api<RowsPage>("GET", `/api/tables/${tableId}/rows?${q}`);
    for (const row of r.body.rows)
      for (const c of Object.values(row.cells)) counts[c.status] = (counts[c.status] ?? 0) + 1;
    cursor = r.body.nextCursor;
  } while (cursor);
  return counts;
}

describe("the live grid in a browser", () => {
  let tableId = "";

  it("signs in with the API key, and the printed link signs a browser in directly", async () => {
    await page.goto(`${app.url}/tables`);
    await page.waitForURL(/\/signin/);
    await page.fill("#api-key", "cf_wrong");
    await page.click("button[type=submit]");
    await page.waitForSelector(".field-error");
    await page.fill("#api-key", app.key);
    await page.click("button[type=submit]");
    await page.waitForURL(/\/tables$/);
    await page.waitForSelector("text=Demo: accounts");
    // The cookie is httpOnly: page scripts cannot read the key.
    expect(await page.evaluate(() => document.cookie)).not.toContain(app.key);

    const other = await browser.newContext();
    const second = await other.newPage();
    await second.goto(app.signinUrl);
    await second.waitForURL(/\/tables$/);
    expect(second.url()).not.toContain("#key=");
    await other.close();
  }, 60_000);

  it("refuses a CSV file the import would refuse, in the import's words and line, and makes no table", async () => {
    const tables = async () =>
      (await api<{ tables: unknown[] }>("GET", "/api/tables")).body.tables.length;
    const before = await tables();
    const csv = path.join(dataDir, "broken.csv");
    fs.writeFileSync(csv, 'Name,N\r\nok,1\r\n"never closed,2\r\n');
    await page.setInputFiles("[data-testid=csv-file]", csv);
    const notice = page.locator("[data-testid=import-progress]", { hasText: "failed" });
    await notice.waitFor();
    expect(await notice.textContent()).toContain("line 3: a quoted value is never closed");
    expect(await tables()).toBe(before);
  }, 60_000);

  it("imports a CSV file as a new table", async () => {
    const csv = path.join(dataDir, "people.csv");
    // A BOM, CRLF and a quoted comma: read in the browser as the import reads them.
    const lines = ["\uFEFFName,N", '"Doe, Jane",1'];
    for (let i = 2; i <= 24; i++) lines.push(`person ${i},${i}`);
    fs.writeFileSync(csv, `${lines.join("\r\n")}\r\n`);
    await page.setInputFiles("[data-testid=csv-file]", csv);
    await page.waitForURL(/\/tables\/tbl_/);
    tableId = new URL(page.url()).pathname.split("/").pop() ?? "";
    await page.waitForSelector("[data-testid=stream-state][data-state=live]");
    await waitFor(
      async () => (await page.locator("[data-testid=grid-row]").count()) === 24,
      20_000,
    );
    expect(await page.locator("[data-testid=grid-row]").count()).toBe(24);
    const table = await api<{ columns: { id: string; type: string }[] }>(
      "GET",
      `/api/tables/${tableId}`,
    );
    expect(table.body.columns.map((c) => [c.id, c.type])).toEqual([
      ["name", "text"],
      ["n", "number"],
    ]);
  }, 60_000);

  it("adds a workflow group in the editor, runs it, and every cell completes live without a reload", async () => {
    await workflow("Double", {
      inputs: [{ name: "n", type: "number", required: true }],
      blocks: [{ id: "double", type: "transform", expression: "inputs.n * 2" }],
    });
    await page.click("[data-testid=add-group]");
    const editor = page.getByTestId("group-editor");
    await editor.locator("input[name=name]").fill("Doubled");
    await editor.locator("select[name=workflowId]").selectOption({ label: "Double" });
    await editor.locator('select[name="input.n"]').selectOption("n");
    await editor.getByLabel("Output 1: block or block.path").fill("double");
    await editor.locator('select[name="outputs.0.column"]').selectOption({ label: "New column…" });
    await editor.getByLabel("Output 1: new column name").fill("Doubled value");
    await editor.locator("button[type=submit]").click();
    await page.waitForSelector("[data-testid=group-header-doubled]");
    // A marker that a reload would wipe: every change below must arrive live.
    await page.evaluate(() => {
      (window as unknown as { noReload: boolean }).noReload = true;
    });
    await page.click("[data-testid=run-menu-doubled]");
    await page.click("text=Run all rows");
    expect(await waitFor(async () => (await shown("doubled")).completed === 24, 60_000, 200)).toBe(
      true,
    );
    expect(await page.evaluate(() => (window as unknown as { noReload?: boolean }).noReload)).toBe(
      true,
    );
    const values = await page
      .locator("[data-testid=grid-row]")
      .first()
      .locator("[data-testid=value-doubled_value]")
      .textContent();
    expect(values).toBe("2");
  }, 120_000);

  it("Stop during a long run leaves no cell running, and the grid says so live", async () => {
    const slow = await workflow("Slow", {
      inputs: [],
      blocks: [{ id: "nap", type: "wait", ms: 20_000 }],
    });
    const t = await api<{ columns: unknown[]; groups: unknown[] }>("GET", `/api/tables/${tableId}`);
    const patched = await api("PATCH", `/api/tables/${tableId}`, {
      columns: [...t.body.columns, { id: "napped", name: "Napped", type: "json" }],
      groups: [
        ...t.body.groups,
        {
          id: "slow",
          name: "Slow",
          kind: "workflow",
          workflowId: slow,
          outputs: [{ columnId: "napped", from: "nap" }],
        },
      ],
    });
    expect(patched.status).toBe(200);
    await page.waitForSelector("[data-testid=group-header-slow]");
    await page.click("[data-testid=run-menu-slow]");
    await page.click("text=Run all rows");
    expect(await waitFor(async () => ((await shown("slow")).running ?? 0) >= 3, 30_000, 100)).toBe(
      true,
    );
    await page.waitForSelector("[data-testid=run-progress][data-status=active]");
    const shot = await page.screenshot({ fullPage: false });
    expect(shot.length).toBeGreaterThan(10_000);
    const shots = process.env.SAVE_SCREENSHOTS === "1" ? path.join(root, "docs") : dataDir;
    fs.writeFileSync(path.join(shots, "grid-mid-run.png"), shot);
    await page.click("[data-testid=stop-all]");
    expect(
      await waitFor(
        async () => {
          const s = await shown("slow");
          return (s.running ?? 0) === 0 && (s.queued ?? 0) === 0 && (s.cancelled ?? 0) > 0;
        },
        30_000,
        100,
      ),
    ).toBe(true);
    const counts = await cellCounts(tableId);
    expect(counts.running ?? 0).toBe(0);
    expect(counts.queued ?? 0).toBe(0);
  }, 120_000);

  it("editing an input cell re-runs its dependent group and shows the new output", async () => {
    const t = await api<{ groups: { id: string }[] }>("GET", `/api/tables/${tableId}`);
    const groups = t.body.groups.map((g) =>
      g.id === "doubled" ? { ...g, dependsOn: ["n"], autoRun: true } : g,
    );
    expect((await api("PATCH", `/api/tables/${tableId}`, { groups })).status).toBe(200);
    const first = page.locator("[data-testid=grid-row]").first();
    await first.locator("[data-testid=value-n]").dblclick();
    await first.getByLabel("N value").fill("50");
    await first.getByLabel("N value").press("Enter");
    expect(
      await waitFor(
        async () =>
          (await first.locator("[data-testid=value-doubled_value]").textContent()) === "100",
        30_000,
        100,
      ),
    ).toBe(true);
    // A value the column cannot hold is refused in place, not sent.
    await first.locator("[data-testid=value-n]").dblclick();
    await first.getByLabel("N value").fill("fifty");
    await first.getByLabel("N value").press("Enter");
    await first.locator(".grid-cell.invalid").waitFor();
    await first.getByLabel("N value").press("Escape");
  }, 60_000);

  it("approves a paused cell from the grid and the cascade carries on", async () => {
    const review = await workflow("Review", {
      inputs: [],
      blocks: [
        { id: "ok", type: "approval", prompt: "Looks right?", next: "after" },
        { id: "after", type: "transform", expression: "blocks.ok.approved ? 'yes' : 'no'" },
      ],
    });
    const t = await api<{ columns: unknown[]; groups: unknown[] }>("GET", `/api/tables/${tableId}`);
    await api("PATCH", `/api/tables/${tableId}`, {
      columns: [...t.body.columns, { id: "verdict", name: "Verdict", type: "text" }],
      groups: [
        ...t.body.groups,
        {
          id: "review",
          name: "Review",
          kind: "workflow",
          workflowId: review,
          outputs: [{ columnId: "verdict", from: "after" }],
        },
      ],
    });
    await page.waitForSelector("[data-testid=group-header-review]");
    const rowId = await page.locator("[data-testid=grid-row]").first().getAttribute("data-row-id");
    const run = await api("POST", `/api/tables/${tableId}/runs`, {
      groupIds: ["review"],
      mode: "all",
      rowIds: [rowId],
    });
    expect(run.status).toBe(202);
    const first = page.locator(`[data-row-id="${rowId}"]`);
    await first.locator("[data-testid=cell-review] [data-status=paused]").waitFor();
    await first.locator("[data-testid=cell-review] button", { hasText: "Approve" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Approve", exact: true }).click();
    await first.locator("[data-testid=cell-review] [data-status=completed]").waitFor();
    expect(await first.locator("[data-testid=value-verdict]").textContent()).toBe("yes");
  }, 60_000);

  it("reconnects after the server went away and catches up on what it missed", async () => {
    const rowId = await page.locator("[data-testid=grid-row]").nth(1).getAttribute("data-row-id");
    const port = Number(new URL(app.url).port);
    const pgPort = app.pgPort;
    // A restart drops every stream; the browser keeps its page and reconnects by itself
    // with Last-Event-ID once the server is back.
    expect(await stopCellflow(dataDir, app)).toBe(true);
    await page.waitForSelector("[data-testid=stream-state][data-state=reconnecting]");
    app = await startCellflow(dataDir, port, pgPort);
    // The file's teardown stops the server the session holds.
    ui.app = app;
    await api("PATCH", `/api/tables/${tableId}/rows/${rowId}`, { data: { name: "renamed" } });
    const cell = page.locator(`[data-row-id="${rowId}"] [data-testid=value-name]`);
    expect(await waitFor(async () => (await cell.textContent()) === "renamed", 60_000, 100)).toBe(
      true,
    );
    await page.waitForSelector("[data-testid=stream-state][data-state=live]");
  }, 240_000);
  it("renders only the rows on screen of a 10,000-row table, and scrolls to the last one", async () => {
    const t = await api<{ id: string }>("POST", "/api/tables", {
      name: "Ten thousand",
      columns: [{ id: "k", name: "K", type: "number" }],
    });
    for (let i = 0; i < 10_000; i += 1_000) {
      const rows = Array.from({ length: 1_000 }, (_, j) => ({ data: { k: i + j + 1 } }));
      expect((await api("POST", `/api/tables/${t.body.id}/rows`, { rows })).status).toBe(201);
    }
    await page.goto(app.signinUrl);
    await page.waitForURL(/\/tables$/);
    await page.goto(`${app.url}/tables/${t.body.id}`);
    await page.waitForSelector("text=10,000 rows");
    const rendered = await page.locator("[data-testid=grid-row]").count();
    expect(rendered).toBeGreaterThan(10);
    expect(rendered).toBeLessThan(100);
    // The rows arrive a page at a time: the last one exists once loading is done (a
    // scroll made before that ends at the last row loaded so far).
    await page.getByText(/Loading rows…/).waitFor({ state: "hidden", timeout: 60_000 });
    await page
      .getByTestId("grid")
      .evaluate((el) => el.scrollTo({ top: el.scrollHeight, behavior: "instant" }));
    const last = page.locator("[data-testid=value-k]", { hasText: /^10000$/ });
    await last.waitFor();
    expect(await page.locator("[data-testid=grid-row]").count()).toBeLessThan(100);
  }, 120_000);

  it("Run ▾ › Run failed only re-runs just the cells whose last attempt errored", async () => {
    const odd = await workflow("Odd fails", {
      inputs: [{ name: "n", type: "number", required: true }],
      blocks: [
        { id: "v", type: "transform", expression: "inputs.n % 2 = 1 ? $error('odd') : inputs.n" },
      ],
    });
    const t = await api<{ id: string }>("POST", "/api/tables", {
      name: "Failing half",
      columns: [
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
    const id = t.body.id;
    await api("POST", `/api/tables/${id}/rows`, {
      rows: Array.from({ length: 10 }, (_, i) => ({ data: { n: i } })),
    });
    type Runs = { runs: { id: string; mode: string; status: string; stamped: number }[] };
    const runs = async () => (await api<Runs>("GET", `/api/tables/${id}/runs`)).body.runs;
    await api("POST", `/api/tables/${id}/runs`, { mode: "all" });
    expect(
      await waitFor(async () => (await runs()).every((r) => r.status === "completed"), 30_000, 100),
    ).toBe(true);
    await page.goto(`${app.url}/tables/${id}`);
    await page.waitForSelector("[data-testid=group-header-odd]");
    expect(await waitFor(async () => (await shown("odd")).error === 5, 30_000, 100)).toBe(true);
    await page.click("[data-testid=run-menu-odd]");
    await page.click("text=Run failed only");
    expect(
      await waitFor(
        async () => (await runs()).some((r) => r.mode === "failed" && r.status === "completed"),
        30_000,
        100,
      ),
    ).toBe(true);
    const failed = (await runs()).find((r) => r.mode === "failed");
    // The five errored cells ran again (and failed again); the five completed ones did not.
    expect(failed?.stamped).toBe(5);
    expect(await waitFor(async () => (await shown("odd")).completed === 5, 30_000, 100)).toBe(true);
  }, 120_000);

  it("the workflows and enrichments pages list the workspace's, most recently edited first", async () => {
    await workflow("Listed last", {
      inputs: [],
      blocks: [{ id: "one", type: "transform", expression: "1" }],
    });
    await page.goto(`${app.url}/workflows`);
    const names = page.locator(".wf-list-name");
    await names.first().waitFor();
    expect(await names.first().textContent()).toBe("Listed last");
    expect(await names.allTextContents()).toContain("Double");
    await page.goto(`${app.url}/enrichments`);
    await page.locator(".en-card").first().waitFor();
    expect(await page.locator(".en-card").count()).toBeGreaterThan(0);
    expect(await page.locator(".notice-error").count()).toBe(0);
  }, 60_000);
});

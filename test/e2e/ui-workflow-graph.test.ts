/**
 * The workflow editor's drawn graph, in real headless Chromium against the real
 * `npm start`: a workflow with a condition and a join is drawn (blocks, the entry, the
 * join, the condition's `true`/`false` edges labelled); a failed cell's details link its
 * failing block to the editor, which highlights that block and brings it on screen; and
 * the graph follows the JSON as it is edited (a block added, a `next` to no block drawn
 * to a placeholder with the problem listed); a graph too big to read whole is centred on
 * the highlighted block. A screenshot of the editor with the graph is
 * taken (and kept as docs/workflow-graph.png with SAVE_SCREENSHOTS=1).
 */
import fs from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/processes";
import { shownStatuses, uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const root = path.resolve(import.meta.dirname, "../..");
const ui = uiSessionOfFile("cellflow-ui-graph-");

const DEFINITION = {
  inputs: [],
  blocks: [
    { id: "score", type: "transform", name: "Score the lead", expression: "7 * 2", next: "check" },
    {
      id: "check",
      type: "condition",
      name: "Big enough?",
      expression: "blocks.score > 10",
      next: { true: "enrich", false: "skip" },
    },
    {
      id: "enrich",
      type: "transform",
      name: "Enrich",
      expression: "{ 'tier': 'A' }",
      next: "notify",
    },
    { id: "skip", type: "transform", name: "Skip", expression: "{ 'tier': 'C' }", next: "notify" },
    { id: "notify", type: "fail", name: "Notify sales", message: "the sales inbox is full" },
  ],
};

const node = (page: Page, id: string) => page.locator(`[data-testid="graph-node-${id}"]`);
const edge = (page: Page, label: string) =>
  page.locator(`[aria-roledescription=edge][aria-label="${label}"]`);
/** An edge is drawn: its path has a shape. (Playwright counts SVG groups as hidden.) */
async function drawn(page: Page, label: string): Promise<void> {
  const path = edge(page, label).locator("path.react-flow__edge-path");
  await path.waitFor({ state: "attached" });
  expect(await path.getAttribute("d")).toMatch(/^M/);
}

/** Whether a graph node is shown whole: inside the graph's frame, and that on screen. */
async function onScreen(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    const frame = document.querySelector("[data-testid=workflow-graph]");
    if (!el || !frame) return false;
    const r = el.getBoundingClientRect();
    const f = frame.getBoundingClientRect();
    const inFrame =
      r.top >= f.top && r.left >= f.left && r.bottom <= f.bottom && r.right <= f.right;
    return inFrame && r.top >= 0 && r.bottom <= innerHeight && r.width > 0;
  }, selector);
}

describe("the workflow graph in a browser", () => {
  let workflowId = "";

  it("draws the blocks, the entry, the join and the condition's labelled true/false edges", async () => {
    workflowId = await uiWorkflow(ui, "Route leads", DEFINITION);
    const { page } = ui;
    await page.goto(ui.app.signinUrl);
    await page.waitForURL(/\/tables$/);
    await page.goto(`${ui.app.url}/workflows/${workflowId}`);
    await page.waitForSelector("[data-testid=workflow-graph] .react-flow__node");
    for (const b of DEFINITION.blocks) await node(page, b.id).waitFor();
    expect(await page.locator("[data-testid=workflow-graph] .react-flow__node").count()).toBe(5);
    expect(await node(page, "check").textContent()).toContain("condition");
    expect(await node(page, "check").textContent()).toContain("Big enough?");
    expect(await node(page, "score").getAttribute("data-entry")).toBe("true");
    expect(await node(page, "check").getAttribute("data-entry")).toBe("false");
    expect(await node(page, "notify").getAttribute("data-join")).toBe("true");
    expect(await node(page, "enrich").getAttribute("data-join")).toBe("false");

    // Five edges, the condition's two labelled with their port.
    const edges = page.locator("[aria-roledescription=edge]");
    expect(await waitFor(async () => (await edges.count()) === 5, 10_000, 100)).toBe(true);
    await drawn(page, "score to check");
    await drawn(page, "enrich to notify");
    await drawn(page, "skip to notify");
    expect(await edge(page, "check to enrich when true").textContent()).toBe("true");
    expect(await edge(page, "check to skip when false").textContent()).toBe("false");
    expect(await page.locator("[data-testid=graph-problems]").count()).toBe(0);
    // Nothing is highlighted when the page is opened without ?block=.
    expect(await page.locator("[data-highlighted=true]").count()).toBe(0);
    // Clicking a block finds it in the text and selects it in the list and the graph.
    await node(page, "enrich").click();
    await page.locator('.wf-gnode.selected[data-testid="graph-node-enrich"]').waitFor();
    expect(await page.locator(".wf-block.selected .wf-block-id").textContent()).toBe("enrich");
    const selection = await page
      .getByRole("textbox", { name: "Workflow definition (JSON)" })
      .evaluate((t: HTMLTextAreaElement) => t.value.slice(t.selectionStart, t.selectionEnd));
    expect(selection).toContain('"id": "enrich"');
  }, 240_000);

  it("a failed cell's details link to the editor, which highlights the failing block", async () => {
    const t = await uiApi<{ id: string }>(ui, "POST", "/api/tables", {
      name: "Leads",
      columns: [{ id: "tier", name: "Tier", type: "json" }],
      groups: [
        {
          id: "route",
          name: "Route",
          kind: "workflow",
          workflowId,
          outputs: [{ columnId: "tier", from: "enrich" }],
        },
      ],
    });
    expect(t.status).toBe(201);
    const tableId = t.body.id;
    await uiApi(ui, "POST", `/api/tables/${tableId}/rows`, { rows: [{ data: {} }] });
    await uiApi(ui, "POST", `/api/tables/${tableId}/runs`, { mode: "all" });

    const { page } = ui;
    await page.goto(`${ui.app.url}/tables/${tableId}`);
    await page.waitForSelector("[data-testid=group-header-route]");
    expect(
      await waitFor(async () => (await shownStatuses(page, "route")).error === 1, 30_000, 100),
    ).toBe(true);
    await page.locator("[data-testid=cell-route] [data-status=error] button").first().click();
    const dialog = page.getByRole("dialog");
    const link = dialog.locator("[data-testid=block-error-link-notify]");
    await link.waitFor();
    expect(await dialog.textContent()).toContain("the sales inbox is full");
    expect(await link.getAttribute("href")).toBe(`/workflows/${workflowId}?block=notify`);
    await link.click();
    await page.waitForURL(new RegExp(`/workflows/${workflowId}\\?block=notify$`));

    const failing = node(page, "notify");
    await page.waitForSelector('[data-testid="graph-node-notify"][data-highlighted=true]');
    expect(await page.locator("[data-highlighted=true]").count()).toBe(1);
    expect(await failing.getAttribute("class")).toContain("highlighted");
    expect(await node(page, "score").getAttribute("data-highlighted")).toBe("false");
    const shot = await page.screenshot({ fullPage: false });
    expect(shot.length).toBeGreaterThan(10_000);
    const shots = process.env.SAVE_SCREENSHOTS === "1" ? path.join(root, "docs") : ui.dataDir;
    fs.writeFileSync(path.join(shots, "workflow-graph.png"), shot);
    // Centred in the graph and the graph on screen.
    expect(
      await waitFor(() => onScreen(page, '[data-testid="graph-node-notify"]'), 5_000, 100),
    ).toBe(true);
    // The block list beside the text selects it too.
    expect(await page.locator(".wf-block.selected .wf-block-id").textContent()).toBe("notify");
  }, 120_000);

  it("follows the JSON as it is edited: a block added, a next to no block drawn and listed", async () => {
    const { page } = ui;
    const text = page.getByRole("textbox", { name: "Workflow definition (JSON)" });
    const edited = structuredClone(DEFINITION) as {
      blocks: { id: string; type: string; next?: unknown; [k: string]: unknown }[];
    };
    const skip = edited.blocks.find((b) => b.id === "skip");
    if (!skip) throw new Error("no skip block");
    skip.next = ["notify", "audit"];
    edited.blocks.push({ id: "audit", type: "wait", ms: 5, next: "nowhere" });
    await text.fill(JSON.stringify(edited, null, 2));

    await node(page, "audit").waitFor();
    expect(
      await page.locator("[data-testid=workflow-graph] [data-testid^=graph-node-]").count(),
    ).toBe(6);
    await drawn(page, "skip to audit");
    await page.locator('[data-testid="graph-missing-nowhere"]').waitFor();
    await drawn(page, "audit to nowhere (no such block)");
    expect(await page.locator("[data-testid=graph-problems]").textContent()).toContain(
      '"next" names unknown block "nowhere"',
    );

    // Text that does not parse keeps the last good graph, marked stale.
    await text.fill('{ "blocks": [');
    await page.locator("[data-testid=workflow-graph].stale").waitFor();
    expect(await node(page, "audit").count()).toBe(1);

    // Fixed again: the graph follows, the placeholder and the problem go.
    delete edited.blocks[edited.blocks.length - 1]?.next;
    await text.fill(JSON.stringify(edited, null, 2));
    await page.locator("[data-testid=workflow-graph]:not(.stale)").waitFor();
    await page.locator('[data-testid="graph-missing-nowhere"]').waitFor({ state: "detached" });
    expect(await page.locator("[data-testid=graph-problems]").count()).toBe(0);
    expect(await node(page, "audit").textContent()).toContain("ends");
  }, 120_000);
  it("a graph too big to read whole is centred on the highlighted block; an unknown one is said", async () => {
    const blocks = Array.from({ length: 14 }, (_, i) => ({
      id: `step${i}`,
      type: "transform",
      expression: `${i}`,
      ...(i < 13 ? { next: `step${i + 1}` } : {}),
    }));
    const id = await uiWorkflow(ui, "Long chain", { inputs: [], blocks });
    const { page } = ui;
    await page.goto(`${ui.app.url}/workflows/${id}?block=step11`);
    await page.waitForSelector('[data-testid="graph-node-step11"][data-highlighted=true]');
    expect(
      await waitFor(() => onScreen(page, '[data-testid="graph-node-step11"]'), 5_000, 100),
    ).toBe(true);
    expect(await onScreen(page, '[data-testid="graph-node-step0"]')).toBe(false);

    await page.goto(`${ui.app.url}/workflows/${id}?block=ghost`);
    await node(page, "step0").waitFor();
    expect(await page.locator("[data-testid=graph-highlight-missing]").textContent()).toContain(
      "ghost",
    );
    expect(await page.locator("[data-highlighted=true]").count()).toBe(0);
  }, 120_000);
});

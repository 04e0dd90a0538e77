/**
 * Building a workflow in the graph, in real headless Chromium against the real
 * `npm start`, without typing JSON: blocks added from the palette, their expressions set
 * in the block's form, connected by dragging from a block's output handle (a condition's
 * `true` port) to another block's input; several entries are flagged until the blocks are
 * linked; an edge is selected and deleted, the deletion undone (Ctrl+Z) and redone (the
 * button); Save stores exactly the definition the graph shows, which the API accepts.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { dragHandle, settledCentre } from "../helpers/graph-drag";
import { uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-build-");

const node = (page: Page, id: string) => page.locator(`[data-testid="graph-node-${id}"]`);
const edge = (page: Page, label: string) =>
  page.locator(`[aria-roledescription=edge][aria-label="${label}"]`);
const edgeCount = async (page: Page) => page.locator("[aria-roledescription=edge]").count();
/**
 * How long an edge count may take to settle: one edge's change can redraw the others, and a
 * count taken in between saw none of them (CI, once).
 */
const settled = { timeout: 10_000, interval: 50 };

/**
 * Clicks an edge on its drawn line, at a point where nothing covers it (a block drawn
 * over the line takes the click), wherever the curve goes.
 */
async function clickEdge(page: Page, label: string): Promise<void> {
  const path = edge(page, label).locator("path.react-flow__edge-path");
  await path.waitFor({ state: "attached" });
  await settledCentre(path);
  const at = await path.evaluate((p: SVGPathElement) => {
    const m = p.getScreenCTM();
    const own = p.closest("[aria-roledescription=edge]");
    if (!m || !own) return null;
    const length = p.getTotalLength();
    // From the middle outwards: the ends are where an edge is grabbed to move it.
    for (const i of [10, 9, 11, 8, 12, 7, 13, 6, 14, 5, 15, 4, 16, 3, 17]) {
      const pt = p.getPointAtLength((length * i) / 20);
      const x = pt.x * m.a + pt.y * m.c + m.e;
      const y = pt.x * m.b + pt.y * m.d + m.f;
      if (document.elementFromPoint(x, y)?.closest("[aria-roledescription=edge]") === own)
        return { x, y };
    }
    return null;
  });
  if (!at) throw new Error(`no point of edge "${label}" can be clicked`);
  await page.mouse.click(at.x, at.y);
}

interface SavedBlock {
  id: string;
  type: string;
  expression?: string;
  next?: unknown;
}

describe("building a workflow in the graph", () => {
  it("adds, connects, undoes, deletes and saves blocks without typing JSON", async () => {
    const id = await uiWorkflow(ui, "Built in the graph", {
      inputs: [{ name: "name", type: "text", required: true }],
      blocks: [{ id: "greet", type: "transform", expression: "'Hello, ' & inputs.name" }],
    });
    const { page } = ui;
    await page.goto(ui.app.signinUrl);
    await page.waitForURL(/\/tables$/);
    await page.goto(`${ui.app.url}/workflows/${id}`);
    await node(page, "greet").waitFor();
    expect(await page.getByTestId("graph-undo").isDisabled()).toBe(true);

    // A condition and a transform from the palette, each selected as it is added and
    // given its expression in the form.
    await page.getByTestId("palette-condition").click();
    await node(page, "condition").waitFor();
    await page.getByTestId("form-expression").fill("$length(blocks.greet) > 10");
    await page.getByTestId("palette-transform").click();
    await node(page, "transform").waitFor();
    await page.getByTestId("form-expression").fill("'long name'");
    expect(await node(page, "transform").textContent()).toContain("'long name'");

    // Three blocks and no links: three entries, flagged on the graph and on each block.
    const entryProblem = page.getByTestId("graph-entry-problem");
    await entryProblem.waitFor();
    expect(await entryProblem.getAttribute("data-entry")).toBe("several");
    expect(await node(page, "condition").getAttribute("data-problems")).toBe("1");

    // Connected by dragging handles: greet → condition, condition's true port → transform.
    await dragHandle(page, "handle-greet-out", "handle-condition-in");
    await edge(page, "greet to condition").waitFor({ state: "attached" });
    await dragHandle(page, "handle-condition-true", "handle-transform-in");
    await edge(page, "condition to transform when true").waitFor({ state: "attached" });
    await entryProblem.waitFor({ state: "detached" });
    expect(await node(page, "greet").getAttribute("data-entry")).toBe("true");
    expect(await node(page, "transform").getAttribute("data-entry")).toBe("false");
    expect(await page.getByTestId("graph-problems").count()).toBe(0);

    // A fan-out edge added, then selected and deleted with the Delete key.
    await dragHandle(page, "handle-greet-out", "handle-transform-in");
    await edge(page, "greet to transform").waitFor({ state: "attached" });
    await expect.poll(() => edgeCount(page), settled).toBe(3);
    await clickEdge(page, "greet to transform");
    await page.locator("[data-testid=workflow-graph]:not([data-selected-edge=''])").waitFor();
    await page.keyboard.press("Delete");
    await edge(page, "greet to transform").waitFor({ state: "detached" });
    await expect.poll(() => edgeCount(page), settled).toBe(2);

    // Undo brings the edge back; redo (the button) takes it away again.
    await page.keyboard.press("Control+z");
    await edge(page, "greet to transform").waitFor({ state: "attached" });
    await expect.poll(() => edgeCount(page), settled).toBe(3);
    await page.getByTestId("graph-redo").click();
    await edge(page, "greet to transform").waitFor({ state: "detached" });
    expect(await page.getByTestId("graph-redo").isDisabled()).toBe(true);

    // The JSON view follows the graph.
    const text = page.getByRole("textbox", { name: "Workflow definition (JSON)" });
    const shown = JSON.parse(await text.inputValue()) as { blocks: SavedBlock[] };
    expect(shown.blocks.map((b) => b.id)).toEqual(["greet", "condition", "transform"]);

    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.locator(".wf-save-state:not(.dirty)").waitFor();
    expect(await page.locator(".wf-save-state").textContent()).toMatch(/^Saved/);

    const saved = await uiApi<{ definition: { blocks: SavedBlock[] } }>(
      ui,
      "GET",
      `/api/workflows/${id}`,
    );
    expect(saved.status).toBe(200);
    const byId = new Map(saved.body.definition.blocks.map((b) => [b.id, b]));
    expect(byId.get("greet")?.next).toBe("condition");
    expect(byId.get("condition")).toMatchObject({
      type: "condition",
      expression: "$length(blocks.greet) > 10",
      next: { true: "transform" },
    });
    expect(byId.get("transform")).toMatchObject({ type: "transform", expression: "'long name'" });
    expect(byId.get("transform")?.next).toBeUndefined();
    expect(saved.body.definition.blocks.map((b) => b.id)).toEqual([
      "greet",
      "condition",
      "transform",
    ]);
  }, 240_000);

  it("moves an edge's end to another block, flags an unknown workflow id, and undoes", async () => {
    const { page } = ui;
    await page.getByTestId("palette-fail").click();
    await node(page, "fail").waitFor();
    // The end of condition's true edge, dragged from the transform to the fail block.
    const end = edge(page, "condition to transform when true").locator(
      "circle.react-flow__edgeupdater-target",
    );
    await end.waitFor({ state: "attached" });
    const from = await settledCentre(end);
    const to = await settledCentre(page.getByTestId("handle-fail-in"));
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 5 });
    await page.mouse.move(to.x, to.y, { steps: 5 });
    await page.mouse.up();
    await edge(page, "condition to fail when true").waitFor({ state: "attached" });
    expect(await edge(page, "condition to transform when true").count()).toBe(0);
    // The transform has nothing pointing at it now: a second entry.
    await page.locator('[data-testid="graph-entry-problem"][data-entry=several]').waitFor();
    expect(await node(page, "transform").getAttribute("data-entry")).toBe("true");

    // A workflow block names no workflow of the workspace until one is chosen.
    await page.getByTestId("palette-workflow").click();
    const badge = page.getByTestId("graph-problem-workflow");
    await badge.waitFor();
    expect(await badge.getAttribute("title")).toContain("is not a workflow of this workspace");
    expect(await page.getByTestId("graph-problems").textContent()).toContain(
      "is not a workflow of this workspace",
    );

    // Undo, step by step, back to the saved graph.
    await page.getByTestId("graph-undo").click();
    await node(page, "workflow").waitFor({ state: "detached" });
    await page.keyboard.press("Control+z");
    await edge(page, "condition to transform when true").waitFor({ state: "attached" });
    await page.keyboard.press("Control+z");
    await node(page, "fail").waitFor({ state: "detached" });
    await page.locator(".wf-save-state:not(.dirty)").waitFor();
  }, 120_000);
});

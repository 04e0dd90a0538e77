/**
 * The workflow builder end to end, in real headless Chromium against the real
 * `npm start`, without typing JSON: a new workflow is built in the graph into three blocks
 * with a condition (palette, the block form, dragged handles), saved and deployed, used in
 * a table through "Use in a table…" (a group on its deployed version, mapped from that
 * version, not from an unsaved block on screen), tried on that
 * table's rows through the group (each block's output shown on the graph), changed and
 * deployed again, rolled back to its first version from the history panel, and the
 * table's cells, run, complete with what the rolled-back version computes.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { dragHandle } from "../helpers/graph-drag";
import { waitFor } from "../helpers/processes";
import { uiApi, uiSessionOfFile } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-builder-");

const node = (page: Page, id: string) => page.getByTestId(`graph-node-${id}`);
const edge = (page: Page, label: string) =>
  page.locator(`[aria-roledescription=edge][aria-label="${label}"]`);

interface Versions {
  versions: { version: number; rolledBackFrom: number | null }[];
}
interface RowPage {
  rows: { data: Record<string, unknown>; cells: Record<string, { status: string }> }[];
}

async function until(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  expect(await waitFor(check, ms, 100)).toBe(true);
}

describe("the workflow builder, start to finish", () => {
  it("builds, tries on a row, deploys, changes, rolls back and uses a workflow in a table whose cells complete", async () => {
    const table = await uiApi<{ id: string }>(ui, "POST", "/api/tables", {
      name: "Leads",
      columns: [{ id: "name", name: "Name", type: "text" }],
    });
    expect(table.status).toBe(201);
    const tableId = table.body.id;
    await uiApi(ui, "POST", `/api/tables/${tableId}/rows`, {
      rows: [{ data: { name: "Ada" } }, { data: { name: "Bartholomew" } }],
    });

    // A new workflow: the starter block greets its `name` input.
    const { page } = ui;
    await page.goto(ui.app.signinUrl);
    await page.waitForURL(/\/tables$/);
    await page.goto(`${ui.app.url}/workflows`);
    await page.getByRole("button", { name: "New workflow" }).click();
    await page.waitForURL(/\/workflows\/[^/]+$/);
    const workflowId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
    await node(page, "greet").waitFor();

    // Three blocks with a condition, built in the graph: a long greeting takes the true port.
    await page.getByTestId("palette-condition").click();
    await node(page, "condition").waitFor();
    await page.getByTestId("form-expression").fill("$length(blocks.greet) > 12");
    await page.getByTestId("palette-transform").click();
    await node(page, "transform").waitFor();
    await page.getByTestId("form-expression").fill("'long name'");
    await dragHandle(page, "handle-greet-out", "handle-condition-in");
    await edge(page, "greet to condition").waitFor({ state: "attached" });
    await dragHandle(page, "handle-condition-true", "handle-transform-in");
    await edge(page, "condition to transform when true").waitFor({ state: "attached" });
    expect(await page.getByTestId("graph-entry-problem").count()).toBe(0);
    expect(await node(page, "greet").getAttribute("data-entry")).toBe("true");

    // Save & deploy: version 1.
    await page.getByRole("button", { name: "Save & deploy" }).click();
    await page.locator(".wf-version", { hasText: "Deployed · v1" }).waitFor();
    const saved = await uiApi<{ definition: { blocks: { id: string; next?: unknown }[] } }>(
      ui,
      "GET",
      `/api/workflows/${workflowId}`,
    );
    expect(saved.body.definition.blocks.map((b) => [b.id, b.next ?? null])).toEqual([
      ["greet", "condition"],
      ["condition", { true: "transform" }],
      ["transform", null],
    ]);

    // An unsaved block more (undone below): the dialog maps what the group will run, the
    // deployed version, not the draft on screen.
    await page.getByTestId("palette-transform").click();
    await node(page, "transform_2").waitFor();

    // Use in a table…: the input from the Name column, the terminal block into a new
    // column, the group on the deployed version.
    await page.getByTestId("use-in-table-open").click();
    await page.getByTestId("use-in-table-dialog").waitFor();
    await page.getByTestId("use-in-table-table").selectOption(tableId);
    await page.getByTestId("use-in-table-name").waitFor();
    expect(await page.getByTestId("use-in-table-input-name").inputValue()).toBe("name");
    expect(await page.getByTestId("use-in-table-from-0").inputValue()).toBe("transform");
    expect(await page.getByTestId("use-in-table-version").inputValue()).toBe("deployed");
    expect(await page.getByTestId("use-in-table-mapped-from").textContent()).toContain("(v1)");
    expect(await page.getByTestId("use-in-table-output-1").count()).toBe(0);
    await page.getByTestId("use-in-table-new-type-0").selectOption("text");
    await page.getByTestId("use-in-table-submit").click();
    await page.getByTestId("use-in-table-done").waitFor();
    await page.getByTestId("use-in-table-dialog").getByRole("button", { name: "Close" }).click();
    await page.getByTestId("graph-undo").click();
    await node(page, "transform_2").waitFor({ state: "detached" });
    await page.locator(".wf-save-state:not(.dirty)").waitFor();
    const groups = await uiApi<{ groups: { id: string; version: string }[] }>(
      ui,
      "GET",
      `/api/tables/${tableId}`,
    );
    expect(groups.body.groups).toHaveLength(1);
    const groupId = groups.body.groups[0]?.id ?? "";
    expect(groups.body.groups[0]?.version).toBe("deployed");

    // Tried on the table's rows through the group: Ada's greeting is short (the condition
    // is false, nothing after it), Bartholomew's is long; the graph shows each block's output.
    await page.locator("label", { hasText: "On a table row" }).click();
    await page.getByTestId("try-table").selectOption(tableId);
    await page.waitForSelector(`[data-testid="try-group"] option[value="${groupId}"]`, {
      state: "attached",
    });
    await until(async () => (await page.getByTestId("try-row-id").inputValue()) !== "");
    await page.getByTestId("try-row").selectOption({ index: 2 });
    await page.getByTestId("try-run").click();
    await page.getByTestId("try-status").waitFor();
    expect(await page.getByTestId("try-status").textContent()).toBe("Completed");
    expect(JSON.parse((await page.getByTestId("try-outputs").textContent()) ?? "")).toEqual({
      transform: "long name",
    });
    await page.getByTestId("graph-result-greet").waitFor();
    expect(await page.getByTestId("graph-result-greet").textContent()).toContain(
      "Hello, Bartholomew",
    );
    expect(await page.getByTestId("graph-result-transform").textContent()).toContain("long name");

    // Changed and deployed again: version 2 says it louder.
    await node(page, "transform").click();
    await page.getByTestId("form-expression").fill("'LONG NAME'");
    await page.getByRole("button", { name: "Save & deploy" }).click();
    await page.locator(".wf-version", { hasText: "Deployed · v2" }).waitFor();

    // Rolled back from the history: version 1 against the draft, then deployed as v3.
    const version = (n: number) => page.getByTestId(`history-version-${n}`);
    await version(2).waitFor();
    await version(1).click();
    const diff = page.getByTestId("history-diff");
    await diff.waitFor();
    expect(await diff.locator("[data-op=removed]").textContent()).toContain("'long name'");
    expect(await diff.locator("[data-op=added]").textContent()).toContain("'LONG NAME'");
    page.once("dialog", (d) => void d.accept());
    await page.locator("[data-testid=history-deploy]:enabled").click();
    await version(3).waitFor();
    expect(await version(3).textContent()).toContain("rolled back from v1");
    const versions = await uiApi<Versions>(ui, "GET", `/api/workflows/${workflowId}/versions`);
    expect(versions.body.versions.map((v) => [v.version, v.rolledBackFrom])).toEqual([
      [3, 1],
      [2, null],
      [1, null],
    ]);

    // The table's cells, run, complete with the rolled-back version's answer.
    expect((await uiApi(ui, "POST", `/api/tables/${tableId}/runs`, { mode: "all" })).status).toBe(
      202,
    );
    let rows: RowPage["rows"] = [];
    await until(async () => {
      rows = (await uiApi<RowPage>(ui, "GET", `/api/tables/${tableId}/rows`)).body.rows;
      return rows.length === 2 && rows.every((r) => r.cells[groupId]?.status === "completed");
    }, 60_000);
    const byName = new Map(rows.map((r) => [r.data.name, r.data.transform ?? null]));
    expect(byName.get("Bartholomew")).toBe("long name");
    expect(byName.get("Ada")).toBeNull();
  }, 300_000);
});

/**
 * "Use in a table…" and "Try it" in the workflow editor, in real headless Chromium against
 * the real `npm start`: the dialog adds the workflow to a table as a group (inputs mapped
 * to the column of the same name, one new column per terminal block) and a run fills
 * them; a try on typed inputs and a try on a row through that group show the run's
 * status, outputs and each block; unsaved changes are what a try runs; a paid block asks
 * for a confirmation before anything is sent.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/processes";
import { uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-try-");

const DEFINITION = {
  inputs: [{ name: "name", type: "text", required: true }],
  blocks: [
    { id: "start", type: "transform", expression: "inputs.name", next: ["upper", "length"] },
    { id: "upper", type: "transform", expression: "$uppercase(blocks.start)", name: "Upper" },
    { id: "length", type: "transform", expression: "$length(blocks.start)" },
  ],
};

const byTest = (page: Page, id: string) => page.locator(`[data-testid="${id}"]`);

interface RowPage {
  rows: { data: Record<string, unknown>; cells: Record<string, { status: string }> }[];
}

describe("try it and use in a table, in a browser", () => {
  let workflowId = "";
  let tableId = "";

  it("“Use in a table…” adds the group with the default mapping, and a run fills its new columns", async () => {
    workflowId = await uiWorkflow(ui, "Shout", DEFINITION);
    const t = await uiApi<{ id: string }>(ui, "POST", "/api/tables", {
      name: "People",
      columns: [{ id: "full_name", name: "Name", type: "text" }],
    });
    expect(t.status).toBe(201);
    tableId = t.body.id;
    await uiApi(ui, "POST", `/api/tables/${tableId}/rows`, {
      rows: [{ data: { full_name: "ada" } }],
    });

    const { page } = ui;
    await page.goto(ui.app.signinUrl);
    await page.waitForURL(/\/tables$/);
    await page.goto(`${ui.app.url}/workflows/${workflowId}`);
    await byTest(page, "use-in-table-open").click();
    await byTest(page, "use-in-table-dialog").waitFor();
    await byTest(page, "use-in-table-table").selectOption(tableId);
    await byTest(page, "use-in-table-name").waitFor();
    expect(await byTest(page, "use-in-table-input-name").inputValue()).toBe("full_name");
    expect(await byTest(page, "use-in-table-name").inputValue()).toBe("Shout");
    expect(await byTest(page, "use-in-table-from-0").inputValue()).toBe("upper");
    expect(await byTest(page, "use-in-table-from-1").inputValue()).toBe("length");
    // No deployed version: the group runs the live draft.
    expect(await byTest(page, "use-in-table-version").inputValue()).toBe("live");
    await byTest(page, "use-in-table-new-type-0").selectOption("text");
    await byTest(page, "use-in-table-submit").click();
    const done = byTest(page, "use-in-table-done");
    await done.waitFor();
    expect(await done.locator("a").getAttribute("href")).toBe(`/tables/${tableId}`);
    await byTest(page, "use-in-table-dialog").getByRole("button", { name: "Close" }).click();

    const table = await uiApi<{
      columns: { id: string; type: string }[];
      groups: { id: string }[];
    }>(ui, "GET", `/api/tables/${tableId}`);
    expect(table.body.groups.map((g) => g.id)).toEqual(["shout"]);
    expect(table.body.columns.map((c) => [c.id, c.type])).toEqual([
      ["full_name", "text"],
      ["upper", "text"],
      ["length", "json"],
    ]);
    await uiApi(ui, "POST", `/api/tables/${tableId}/runs`, { mode: "all" });
    let rows: RowPage["rows"] = [];
    const filled = await waitFor(
      async () => {
        rows = (await uiApi<RowPage>(ui, "GET", `/api/tables/${tableId}/rows`)).body.rows;
        return rows[0]?.cells.shout?.status === "completed";
      },
      30_000,
      100,
    );
    expect(filled).toBe(true);
    expect(rows[0]?.data).toMatchObject({ upper: "ADA", length: 3 });
  }, 240_000);

  it("tries the workflow on typed inputs, then on a row through its group", async () => {
    const { page } = ui;
    await byTest(page, "try-input-name").fill("grace");
    await byTest(page, "try-run").click();
    await byTest(page, "try-status").waitFor();
    expect(await byTest(page, "try-status").textContent()).toBe("Completed");
    expect(JSON.parse((await byTest(page, "try-outputs").textContent()) ?? "")).toEqual({
      upper: "GRACE",
      length: 5,
    });
    for (const id of ["start", "upper", "length"]) await byTest(page, `try-block-${id}`).waitFor();
    expect(await byTest(page, "try-block-upper").textContent()).toContain("GRACE");

    await page.locator("label", { hasText: "On a table row" }).click();
    await byTest(page, "try-table").selectOption(tableId);
    // The table's only group of this workflow and its first row are chosen.
    await page.waitForSelector('[data-testid="try-group"] option[value="shout"]', {
      state: "attached",
    });
    expect(
      await waitFor(async () => (await byTest(page, "try-row-id").inputValue()) !== "", 5_000, 50),
    ).toBe(true);
    expect(await byTest(page, "try-row").locator("option:checked").textContent()).toBe(
      "#1 · ada · ADA",
    );
    await byTest(page, "try-clear").click();
    await byTest(page, "try-result").waitFor({ state: "detached" });
    await byTest(page, "try-run").click();
    await byTest(page, "try-status").waitFor();
    // With a group, the outputs are by column id, as the cell's.
    expect(JSON.parse((await byTest(page, "try-outputs").textContent()) ?? "")).toEqual({
      upper: "ADA",
      length: 3,
    });
  }, 120_000);

  it("a try runs the unsaved changes, and a paid block asks first", async () => {
    const { page } = ui;
    const text = page.getByRole("textbox", { name: "Workflow definition (JSON)" });
    const edited = structuredClone(DEFINITION) as { blocks: Record<string, unknown>[] };
    edited.blocks[1] = { ...edited.blocks[1], expression: "$lowercase(blocks.start) & '!'" };
    await text.fill(JSON.stringify(edited, null, 2));
    await page.locator("label", { hasText: "On inputs" }).click();
    await byTest(page, "try-input-name").fill("Lin");
    await byTest(page, "try-run").click();
    await page.waitForFunction(() =>
      document.querySelector('[data-testid="try-outputs"]')?.textContent?.includes("lin!"),
    );

    // After `upper`, so that the workflow keeps one entry.
    edited.blocks[1] = { ...edited.blocks[1], next: "look" };
    edited.blocks.push({
      id: "look",
      type: "enrichment",
      enrichmentId: "company_lookup",
      inputs: { domain: "blocks.start" },
    });
    await text.fill(JSON.stringify(edited, null, 2));
    await byTest(page, "try-run").click();
    const confirm = byTest(page, "try-paid");
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain("look (enrichment company_lookup)");
    await byTest(page, "try-confirm-paid").click();
    await confirm.waitFor({ state: "detached" });
    await page.waitForFunction(
      () =>
        document.querySelector('[data-testid="try-block-look"]') ||
        document.querySelector('[data-testid="try-refused"]'),
    );
    expect(
      await byTest(page, "try-refused").count(),
      (await page.locator(".try-panel").textContent()) ?? "",
    ).toBe(0);
    // The paid block ran (whatever its provider answered): it is listed with its status.
    await byTest(page, "try-block-look").waitFor();
    await byTest(page, "try-status").waitFor();
  }, 120_000);
});

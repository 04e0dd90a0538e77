import { describe, expect, it } from "vitest";
import { splitNameDefinition as DEFINITION } from "../helpers/definitions";
import { waitFor } from "../helpers/processes";
import { uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-try-");

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
    await page.getByTestId("use-in-table-open").click();
    await page.getByTestId("use-in-table-dialog").waitFor();
    await page.getByTestId("use-in-table-table").selectOption(tableId);
    await page.getByTestId("use-in-table-name").waitFor();
    expect(await page.getByTestId("use-in-table-input-name").inputValue()).toBe("full_name");
    expect(await page.getByTestId("use-in-table-name").inputValue()).toBe("Shout");
    expect(await page.getByTestId("use-in-table-from-0").inputValue()).toBe("upper");
    expect(await page.getByTestId("use-in-table-from-1").inputValue()).toBe("length");
    // No deployed version: the group runs the live draft.
    expect(await page.getByTestId("use-in-table-version").inputValue()).toBe("live");
    await page.getByTestId("use-in-table-new-type-0").selectOption("text");
    await page.getByTestId("use-in-table-submit").click();
    const done = page.getByTestId("use-in-table-done");
    await done.waitFor();
    expect(await done.locator("a").getAttribute("href")).toBe(`/tables/${tableId}`);
    await page.getByTestId("use-in-table-dialog").getByRole("button", { name: "Close" }).click();

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
    await page.getByTestId("try-input-name").fill("grace");
    await page.getByTestId("try-run").click();
    await page.getByTestId("try-status").waitFor();
    expect(await page.getByTestId("try-status").textContent()).toBe("Completed");
    expect(JSON.parse((await page.getByTestId("try-outputs").textContent()) ?? "")).toEqual({
      upper: "GRACE",
      length: 5,
    });
    for (const id of ["start", "upper", "length"])
      await page.getByTestId(`try-block-${id}`).waitFor();
    expect(await page.getByTestId("try-block-upper").textContent()).toContain("GRACE");

    await page.locator("label", { hasText: "On a table row" }).click();
    await page.getByTestId("try-table").selectOption(tableId);
    // The table's only group of this workflow and its first row are chosen.
    await page.waitForSelector('[data-testid="try-group"] option[value="shout"]', {
      state: "attached",
    });
    expect(
      await waitFor(
        async () => (await page.getByTestId("try-row-id").inputValue()) !== "",
        5_000,
        50,
      ),
    ).toBe(true);
    expect(await page.getByTestId("try-row").locator("option:checked").textContent()).toBe(
      "#1 · ada · ADA",
    );
    await page.getByTestId("try-clear").click();
    await page.getByTestId("try-result").waitFor({ state: "detached" });
    await page.getByTestId("try-run").click();
    await page.getByTestId("try-status").waitFor();
    // With a group, the outputs are by column id, as the cell's.
    expect(JSON.parse((await page.getByTestId("try-outputs").textContent()) ?? "")).toEqual({
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
    await page.getByTestId("try-input-name").fill("Lin");
    await page.getByTestId("try-run").click();
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
    await page.getByTestId("try-run").click();
    const confirm = page.getByTestId("try-paid");
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain("look (enrichment company_lookup)");
    await page.getByTestId("try-confirm-paid").click();
    await confirm.waitFor({ state: "detached" });
    await page.waitForFunction(
      () =>
        document.querySelector('[data-testid="try-block-look"]') ||
        document.querySelector('[data-testid="try-refused"]'),
    );
    expect(
      await page.getByTestId("try-refused").count(),
      (await page.locator(".try-panel").textContent()) ?? "",
    ).toBe(0);
    // The paid block ran (whatever its provider answered): it is listed with its status.
    await page.getByTestId("try-block-look").waitFor();
    await page.getByTestId("try-status").waitFor();
  }, 120_000);
});

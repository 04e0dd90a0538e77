/**
 * A run condition built in the group editor, in real headless Chromium against the real
 * `npm start`: "Only run if" › Tier is "pro", built with the filter bar's condition builder
 * and saved with the group; the group header then says the group has a condition, and a
 * run leaves the row whose tier is not "pro" at "Condition not met" (its output blank)
 * while the other runs.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/processes";
import { uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-run-condition-");
const api = <T = Record<string, unknown>>(method: string, p: string, body?: unknown) =>
  uiApi<T>(ui, method, p, body);

interface Row {
  id: string;
  data: Record<string, unknown>;
  cells: Record<string, { status: string; outcome: string | null }>;
}
const rows = async (tableId: string) =>
  (await api<{ rows: Row[] }>("GET", `/api/tables/${tableId}/rows`)).body.rows;

describe("a run condition in the group editor", () => {
  it("builds 'Only run if Tier is pro'; the other row's cell ends 'Condition not met'", async () => {
    const { page } = ui;
    await page.goto(ui.app.signinUrl);
    await page.waitForURL(/\/tables$/);
    const upper = await uiWorkflow(ui, "Upper", {
      inputs: [{ name: "v", type: "text", required: true }],
      blocks: [{ id: "out", type: "transform", expression: "$uppercase(inputs.v)" }],
    });
    const t = await api<{ id: string }>("POST", "/api/tables", {
      name: "Gated",
      columns: [
        { id: "name", name: "Name", type: "text" },
        { id: "tier", name: "Tier", type: "text" },
        { id: "loud", name: "Loud", type: "text" },
      ],
      groups: [
        {
          id: "shout",
          name: "Shout",
          kind: "workflow",
          workflowId: upper,
          inputs: { v: "name" },
          outputs: [{ columnId: "loud", from: "out" }],
        },
      ],
    });
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
    const fields = await builder.getByTestId("condition-field").locator("option").allTextContents();
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

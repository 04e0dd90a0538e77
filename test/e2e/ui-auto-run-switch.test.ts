/**
 * The table's auto-run switch in real headless Chromium against the real `npm start`:
 * turned off from the toolbar it asks nothing and rows inserted then stay unrun; turned
 * back on it asks which backfill: "Leave existing rows as they are" starts nothing, "Run
 * the auto-run groups on rows that never ran" starts one run of mode `new` that fills them.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/processes";
import { uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-switch-");
const api = <T = Record<string, unknown>>(method: string, p: string, body?: unknown) =>
  uiApi<T>(ui, method, p, body);

interface Row {
  id: string;
  data: Record<string, unknown>;
  cells: Record<string, unknown>;
}
const rows = async (tableId: string) =>
  (await api<{ rows: Row[] }>("GET", `/api/tables/${tableId}/rows`)).body.rows;
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
    const upper = await uiWorkflow(ui, "Upper", {
      inputs: [{ name: "v", type: "text", required: true }],
      blocks: [{ id: "out", type: "transform", expression: "$uppercase(inputs.v)" }],
    });
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
      async () => (await rows(tableId)).every((r) => r.data.a === String(r.data.src).toUpperCase()),
      30_000,
    );
    expect(filled, JSON.stringify(await rows(tableId))).toBe(true);
    const started = await runs(tableId);
    expect(started).toHaveLength(1);
    expect(started[0]?.mode).toBe("new");
  }, 180_000);
});

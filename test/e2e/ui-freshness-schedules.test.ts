/**
 * The Schedules dialog in real headless Chromium against one real `npm start` (issue 31's
 * browser test for schedules): from the toolbar a table's schedules open empty; a schedule
 * added in the form (cron, zone, mode stale with its hours) is listed with its next run in
 * its zone and no last run, and the API has it; a bad cron shows the API's refusal; the
 * switch turns it off (no next run) and Delete removes it.
 */
import { describe, expect, it } from "vitest";
import { uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-schedules-");
const api = <T = Record<string, unknown>>(method: string, p: string, body?: unknown) =>
  uiApi<T>(ui, method, p, body);

/** A workflow that upper-cases its input `v` (block `out`). */
const UPPER = {
  inputs: [{ name: "v", type: "text" as const, required: true }],
  blocks: [{ id: "out", type: "transform" as const, expression: "$uppercase(inputs.v)" }],
};

interface ScheduleAnswer {
  id: string;
  mode: string;
  staleAfterHours?: number;
  timezone: string;
  enabled: boolean;
  nextRunAt: string | null;
}
const schedules = async (tableId: string) =>
  (await api<{ schedules: ScheduleAnswer[] }>("GET", `/api/tables/${tableId}/schedules`)).body
    .schedules;

describe("Schedules", () => {
  describe("the Schedules dialog", () => {
    it("adds a stale schedule with its next run, refuses a bad cron, switches it off and deletes it", async () => {
      const { page } = ui;
      await page.goto(ui.app.signinUrl);
      await page.waitForURL(/\/tables$/);
      const upper = await uiWorkflow(ui, "Upper (schedules)", UPPER);
      const t = await api<{ id: string }>("POST", "/api/tables", {
        name: "Nightly",
        columns: [{ id: "name", name: "Name", type: "text" }],
        groups: [
          { id: "g", name: "G", kind: "workflow", workflowId: upper, inputs: { v: "name" } },
        ],
      });
      expect(t.status).toBe(201);
      const tableId = t.body.id;
      await page.goto(`${ui.app.url}/tables/${tableId}`);
      await page.waitForSelector("[data-testid=stream-state][data-state=live]");

      await page.getByTestId("schedules-open").click();
      const dialog = page.getByRole("dialog", { name: "Schedules" });
      await dialog.getByTestId("no-schedules").waitFor();

      await dialog.getByLabel("Cron").fill("30 2 * * *");
      await dialog.getByLabel("Time zone").fill("Europe/Berlin");
      await dialog.getByLabel("Mode").selectOption("stale");
      await dialog.getByLabel("Stale after (hours)").fill("12");
      await dialog.getByTestId("schedule-add").click();
      const row = dialog.getByTestId("schedule-row");
      await row.waitFor();
      const [saved] = await schedules(tableId);
      expect(saved).toMatchObject({
        mode: "stale",
        staleAfterHours: 12,
        timezone: "Europe/Berlin",
        enabled: true,
      });
      // The next run reads in the schedule's zone: 02:30 or 03:30 (a spring-forward day).
      expect(await row.getByTestId("schedule-next").textContent()).toMatch(/0[23]:30/);
      expect(await row.getByTestId("schedule-last").textContent()).toBe("—");

      await dialog.getByLabel("Cron").fill("61 * * * *");
      await dialog.getByTestId("schedule-add").click();
      await dialog.getByTestId("schedule-error").waitFor();
      expect(await dialog.getByTestId("schedule-row").count()).toBe(1);

      // The switch follows the API's answer (a controlled box), so a click, not uncheck().
      await row.getByTestId("schedule-enabled").click();
      await row.getByTestId("schedule-next").filter({ hasText: "—" }).waitFor();
      expect((await schedules(tableId))[0]).toMatchObject({ enabled: false, nextRunAt: null });

      await row.getByTestId("schedule-delete").click();
      await dialog.getByTestId("no-schedules").waitFor();
      expect(await schedules(tableId)).toEqual([]);
    });
  });
});

/**
 * Destinations in real headless Chromium against one real `npm start` (issue 31): the
 * toolbar's Destinations dialog adds a destination and shows its secret once, a row that
 * finishes is posted to it (signed), the receiver's refusal shows as the destination's
 * recent failure, and the dialog disables and deletes it.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../helpers/destination-receiver";
import { waitFor } from "../helpers/processes";
import { uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-destinations-");
const api = <T = Record<string, unknown>>(method: string, p: string, body?: unknown) =>
  uiApi<T>(ui, method, p, body);

/** A workflow that upper-cases its input `v` (block `out`). */
const UPPER = {
  inputs: [{ name: "v", type: "text" as const, required: true }],
  blocks: [{ id: "out", type: "transform" as const, expression: "$uppercase(inputs.v)" }],
};

let receiver: Receiver | undefined;
afterAll(async () => {
  await receiver?.close();
});

describe("Destinations", () => {
  describe("the Destinations dialog", () => {
    it("adds a destination (secret shown once), shows its failures, disables and deletes it", async () => {
      const { page } = ui;
      const r = await startReceiver();
      receiver = r;
      r.answer = () => 404;
      await page.goto(ui.app.signinUrl);
      await page.waitForURL(/\/tables$/);
      const upper = await uiWorkflow(ui, "Upper", UPPER);
      const t = await api<{ id: string }>("POST", "/api/tables", {
        name: "Pushed",
        columns: [
          { id: "name", name: "Name", type: "text" },
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
      await api("POST", `/api/tables/${tableId}/rows`, { rows: [{ data: { name: "ada" } }] });
      await page.goto(`${ui.app.url}/tables/${tableId}`);
      await page.waitForSelector("[data-testid=stream-state][data-state=live]");

      await page.getByTestId("destinations-open").click();
      await page.getByTestId("destinations-empty").waitFor();
      await page.getByTestId("destination-url").fill(r.url);
      await page.getByTestId("destination-name").fill("CRM");
      await page.getByRole("button", { name: "Add" }).click();
      const secret = await page.getByTestId("destination-secret-value").textContent();
      expect(secret).toMatch(/^whsec_/);
      r.secret = secret;
      await page.getByTestId("destination").waitFor();

      const run = await api("POST", `/api/tables/${tableId}/runs`, { mode: "all" });
      expect(run.status).toBe(202);
      expect(await waitFor(() => r.received.length > 0, 15_000)).toBe(true);
      expect(r.received[0]?.signed).toBe(true);
      expect(JSON.parse(r.received[0]?.body ?? "{}").data).toMatchObject({ loud: "ADA" });
      // The receiver's 404 is final: the delivery fails, and the dialog says so.
      await waitFor(async () => {
        await page.getByRole("button", { name: "Refresh" }).click();
        return (await page.getByTestId("destination-failure").count()) > 0;
      }, 10_000);
      expect(await page.getByTestId("destination-failure").first().textContent()).toContain(
        "failed · HTTP 404",
      );

      // A controlled switch: it turns once the server has answered and the list is read again.
      await page.getByTestId("destination-enabled").click();
      await waitFor(
        async () => !(await page.getByTestId("destination-enabled").isChecked()),
        5_000,
      );
      const listed = await api<{ destinations: { enabled: boolean }[] }>(
        "GET",
        `/api/tables/${tableId}/destinations`,
      );
      expect(listed.body.destinations.map((d) => d.enabled)).toEqual([false]);
      await page.getByTestId("destination-delete").click();
      await page.getByTestId("destinations-empty").waitFor();
      // Reopened, the dialog no longer shows the secret.
      await page.getByRole("button", { name: "Close" }).click();
      await page.getByTestId("destinations-open").click();
      await page.getByTestId("destinations-empty").waitFor();
      expect(await page.getByTestId("destination-secret").count()).toBe(0);
    });
  });
});

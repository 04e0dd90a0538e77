/**
 * Tables that keep themselves fresh, in real headless Chromium against one real
 * `npm start` (issue 31's browser test), scenario by scenario on the same server and page:
 * - saved views: the filter bar (a condition, a sort, a hidden column) saved as a view,
 *   which the API then holds; the page reloaded by its URL (`?view=`) shows the view
 *   picked, its conditions and the rows `GET /rows?view=` reads, in its order, without the
 *   hidden column; another view picked; a view deleted. A view whose filter names a column
 *   deleted since shows the 409's message instead of a grid, and a link naming a missing
 *   view says so and shows all rows with the URL cleaned;
 * - schedules: the toolbar's Schedules dialog opens empty; a schedule added in the form
 *   (cron, zone, mode stale with its hours) is listed with its next run in its zone and no
 *   last run, and the API has it; a bad cron shows the API's refusal; the switch turns it
 *   off (no next run) and Delete removes it;
 * - destinations: the Destinations dialog adds a destination and shows its secret once, a
 *   row that finishes is posted to it (signed), the receiver's refusal shows as the
 *   destination's recent failure, and the dialog disables and deletes it.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../helpers/destination-receiver";
import { waitFor } from "../helpers/processes";
import {
  shoutTableBody,
  shownValues,
  UPPER,
  uiApi,
  uiSessionOfFile,
  uiWorkflow,
} from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-freshness-");
const api = <T = Record<string, unknown>>(method: string, p: string, body?: unknown) =>
  uiApi<T>(ui, method, p, body);

// Saved views.
const COLUMNS = [
  { id: "name", name: "Name", type: "text" },
  { id: "n", name: "N", type: "number" },
  { id: "note", name: "Note", type: "text" },
];
interface View {
  id: string;
  name: string;
  where: unknown;
  orderBy: string | null;
  dir: string;
  hiddenColumns: string[];
}
const viewsOf = async (tableId: string) =>
  (await api<{ views: View[] }>("GET", `/api/tables/${tableId}/views`)).body.views;

/** The grid's n column shows exactly `expected`, top to bottom. */
const showsN = (expected: string[]) =>
  waitFor(
    async () => JSON.stringify(await shownValues(ui.page, "n")) === JSON.stringify(expected),
    20_000,
    100,
  );

async function openTable(path: string) {
  await ui.page.goto(`${ui.app.url}${path}`);
  await ui.page.waitForSelector("[data-testid=stream-state][data-state=live]");
}

describe("Saved views", () => {
  let tableId = "";

  it("saves the filter bar as a view, reopens it by URL, picks another, deletes one", async () => {
    const { page } = ui;
    await page.goto(ui.app.signinUrl);
    await page.waitForURL(/\/tables$/);
    const t = await api<{ id: string }>("POST", "/api/tables", { name: "Views", columns: COLUMNS });
    expect(t.status).toBe(201);
    tableId = t.body.id;
    const rows = [3, 7, 0, 9, 1, 8].map((n) => ({ data: { n, name: `r${n}`, note: "x" } }));
    expect((await api("POST", `/api/tables/${tableId}/rows`, { rows })).status).toBe(201);
    await openTable(`/tables/${tableId}`);
    expect(await showsN(["3", "7", "0", "9", "1", "8"])).toBe(true);

    // The filter bar: N > 4, sorted by N descending, Note hidden.
    const bar = page.getByTestId("filter-bar");
    await page.click("[data-testid=filter-add]");
    await bar.getByTestId("condition-field").selectOption("c:n");
    await bar.getByTestId("condition-op").selectOption("gt");
    await bar.getByTestId("condition-value").fill("4");
    await bar.getByTestId("condition-add").click();
    await page.getByTestId("sort-n").click();
    await page.getByTestId("sort-n").click();
    await page.getByTestId("hide-note").click();
    expect(await showsN(["9", "8", "7"])).toBe(true);
    expect(await page.locator("[data-testid=value-note]").count()).toBe(0);

    await page.getByTestId("view-save").click();
    await page.getByTestId("view-name").fill("Big ones");
    await page.getByTestId("view-name-save").click();
    await page.waitForURL(/[?&]view=/);
    const [big] = await viewsOf(tableId);
    expect(big).toMatchObject({
      name: "Big ones",
      where: [{ column: "n", op: "gt", value: 4 }],
      orderBy: "n",
      dir: "desc",
      hiddenColumns: ["note"],
    });
    if (!big) return;
    expect(new URL(page.url()).searchParams.get("view")).toBe(big.id);

    // Another view, made through the API: the reload lists it.
    const small = await api<View>("POST", `/api/tables/${tableId}/views`, {
      name: "Small ones",
      where: [{ column: "n", op: "lt", value: 2 }],
      orderBy: "n",
    });
    expect(small.status).toBe(201);

    // Reloaded by its URL: the view picked, its condition shown, the rows the API reads.
    await openTable(`/tables/${tableId}?view=${big.id}`);
    const picker = page.getByTestId("view-picker");
    expect(await waitFor(async () => (await picker.inputValue()) === big.id, 20_000, 100)).toBe(
      true,
    );
    await bar.getByTestId("filter-chip").filter({ hasText: "N > 4" }).waitFor();
    await page.getByTestId("hidden-chip").filter({ hasText: "Note hidden" }).waitFor();
    const read = await api<{ rows: { data: { n: number } }[] }>(
      "GET",
      `/api/tables/${tableId}/rows?view=${big.id}`,
    );
    expect(read.body.rows.map((r) => String(r.data.n))).toEqual(["9", "8", "7"]);
    expect(await showsN(["9", "8", "7"])).toBe(true);
    expect(await page.locator("[data-testid=value-note]").count()).toBe(0);

    // Another view picked: its rows, its URL.
    await picker.selectOption(small.body.id);
    expect(await showsN(["0", "1"])).toBe(true);
    await bar.getByTestId("filter-chip").filter({ hasText: "N < 2" }).waitFor();
    expect(new URL(page.url()).searchParams.get("view")).toBe(small.body.id);
    expect(await page.locator("[data-testid=value-note]").count()).toBe(2);

    // Deleted: gone from the picker and the API, the URL names no view.
    page.once("dialog", (d) => void d.accept());
    await page.getByTestId("view-delete").click();
    expect(
      await waitFor(async () => (await picker.locator("option").count()) === 2, 20_000, 100),
    ).toBe(true);
    expect((await viewsOf(tableId)).map((v) => v.name)).toEqual(["Big ones"]);
    expect(new URL(page.url()).searchParams.get("view")).toBeNull();
  }, 60_000);

  it("a view naming a column deleted since shows the 409's message instead of a grid; another view or a missing one shows rows", async () => {
    const { page } = ui;
    const [big] = await viewsOf(tableId);
    if (!big) throw new Error("the first scenario's view is missing");
    const byName = await api<View>("POST", `/api/tables/${tableId}/views`, {
      name: "By name",
      orderBy: "name",
      hiddenColumns: ["note"],
    });
    expect(byName.status).toBe(201);
    // N goes (Big ones filters and sorts by it); so does Note, which By name only hides.
    const dropped = await api("PATCH", `/api/tables/${tableId}`, {
      columns: COLUMNS.filter((c) => c.id === "name"),
    });
    expect(dropped.status).toBe(200);
    await openTable(`/tables/${tableId}?view=${big.id}`);
    const error = page.getByTestId("view-error");
    await error.waitFor();
    expect(await error.textContent()).toContain('column "n"');
    expect(await page.getByTestId("grid").count()).toBe(0);
    await page.getByText("Loading rows").waitFor({ state: "detached" });

    // Another view picked: its rows (a deleted hidden column does not break it), no 409 left.
    await page.getByTestId("view-picker").selectOption(byName.body.id);
    const byNames = ["r0", "r1", "r3", "r7", "r8", "r9"];
    expect(
      await waitFor(
        async () => JSON.stringify(await shownValues(page, "name")) === JSON.stringify(byNames),
        20_000,
        100,
      ),
    ).toBe(true);
    expect(await error.count()).toBe(0);

    // A link naming a view the table does not have: said, all rows shown, the URL cleaned.
    await openTable(`/tables/${tableId}?view=view_missing`);
    await page.getByText("The view in this link was not found").waitFor();
    await page.getByTestId("grid").waitFor();
    expect(await page.getByTestId("view-picker").inputValue()).toBe("");
    expect(
      await waitFor(async () => new URL(page.url()).searchParams.get("view") === null, 20_000, 100),
    ).toBe(true);
  }, 30_000);
});

// Schedules.
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

// Destinations.
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
      const t = await api<{ id: string }>("POST", "/api/tables", shoutTableBody("Pushed", upper));
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

/**
 * The group headers' progress bars in real headless Chromium against the real `npm start`:
 * read from `GET /progress` when the grid opens, then moved by the `progress` events
 * while a run goes (the done share grows step by step, the in-flight share shows), and
 * full once the run is over.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/processes";
import { uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-progress-");
const api = <T = Record<string, unknown>>(method: string, p: string, body?: unknown) =>
  uiApi<T>(ui, method, p, body);

const ROWS = 24;

describe("the group headers' progress bars", () => {
  it("move while a run goes: the done share grows from none to all", async () => {
    const { page } = ui;
    await page.goto(ui.app.signinUrl);
    await page.waitForURL(/\/tables$/);
    const slow = await uiWorkflow(ui, "Slow", {
      inputs: [],
      blocks: [
        { id: "pause", type: "wait", ms: 700, next: "out" },
        { id: "out", type: "transform", expression: "'done'" },
      ],
    });
    const t = await api<{ id: string }>("POST", "/api/tables", {
      name: "Progress",
      columns: [{ id: "a", name: "a", type: "text" }],
      groups: [
        {
          id: "gs",
          name: "Slow",
          kind: "workflow",
          workflowId: slow,
          outputs: [{ columnId: "a", from: "out" }],
        },
      ],
    });
    expect(t.status).toBe(201);
    const tableId = t.body.id;
    const inserted = await api("POST", `/api/tables/${tableId}/rows`, {
      rows: Array.from({ length: ROWS }, () => ({ data: {} })),
    });
    expect(inserted.status).toBe(201);
    await page.goto(`${ui.app.url}/tables/${tableId}`);
    await page.waitForSelector("[data-testid=stream-state][data-state=live]");
    const bar = page.getByTestId("group-progress-gs");
    await bar.waitFor();
    const share = async (part: "done" | "active") => Number(await bar.getAttribute(`data-${part}`));
    expect(await share("done")).toBe(0);

    // Three rows at a time, 0.7 s each: the run takes several seconds, so several events.
    const run = await api("POST", `/api/tables/${tableId}/runs`, { mode: "all", window: 3 });
    expect(run.status).toBe(202);
    const seen: number[] = [];
    let sawActive = false;
    const finished = await waitFor(async () => {
      const done = await share("done");
      if (seen.at(-1) !== done) seen.push(done);
      if ((await share("active")) > 0) sawActive = true;
      return done === 1;
    }, 60_000);
    expect(finished, `done shares seen: ${seen.join(", ")}`).toBe(true);
    expect(sawActive).toBe(true);
    // Not one jump from none to all: shares in between, never going back.
    expect(seen.filter((s) => s > 0 && s < 1).length, seen.join(", ")).toBeGreaterThanOrEqual(2);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    expect(await share("active")).toBe(0);
  }, 180_000);
});

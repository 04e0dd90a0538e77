/**
 * The workflow editor's version history, in real headless Chromium against the real
 * `npm start`: the versions are listed newest first with the deployed one marked; a
 * version selected shows its definition against the draft as a line diff; "Deploy this
 * version" (confirmed) deploys a copy as the next version, listed as rolled back from it
 * and marked deployed, the draft untouched; a draft that does not parse is said so.
 */
import { describe, expect, it } from "vitest";
import { uiApi, uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const ui = uiSessionOfFile("cellflow-ui-history-");

const says = (word: string) => ({
  inputs: [],
  blocks: [
    { id: "start", type: "transform", expression: "1", next: "v" },
    { id: "v", type: "transform", expression: `'${word}'` },
  ],
});

describe("workflow history in a browser", () => {
  it("lists versions, diffs one against the draft, and deploys a copy of it as the next version", async () => {
    const id = await uiWorkflow(ui, "History", says("one"));
    const deploy = async () =>
      expect((await uiApi(ui, "POST", `/api/workflows/${id}/deploy`)).status).toBe(201);
    await deploy();
    expect(
      (await uiApi(ui, "PUT", `/api/workflows/${id}`, { definition: says("two") })).status,
    ).toBe(200);
    await deploy();
    expect(
      (await uiApi(ui, "PUT", `/api/workflows/${id}`, { definition: says("draft") })).status,
    ).toBe(200);

    const { page } = ui;
    await page.goto(ui.app.signinUrl);
    await page.waitForURL(/\/tables$/);
    await page.goto(`${ui.app.url}/workflows/${id}`);
    const version = (n: number) => page.locator(`[data-testid=history-version-${n}]`);
    await version(2).waitFor();
    const listed = await page
      .locator("[data-testid^=history-version-]")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-testid")));
    expect(listed).toEqual(["history-version-2", "history-version-1"]);
    expect(await version(2).locator("[data-testid=history-current]").count()).toBe(1);
    expect(await version(1).locator("[data-testid=history-current]").count()).toBe(0);

    // Version 1 against the draft: only the changed line differs.
    await version(1).click();
    const diff = page.locator("[data-testid=history-diff]");
    await diff.waitFor();
    expect(await diff.getAttribute("data-changes")).toBe("2");
    expect(await diff.locator("[data-op=removed]").textContent()).toContain(
      `"expression": "'one'"`,
    );
    expect(await diff.locator("[data-op=added]").textContent()).toContain(
      `"expression": "'draft'"`,
    );

    // The deployed version cannot be deployed again; version 1 can, after a confirmation.
    await version(2).click();
    await page.locator("[data-testid=history-deploy]:disabled").waitFor();
    await version(1).click();
    page.once("dialog", (d) => void d.accept());
    await page.locator("[data-testid=history-deploy]:enabled").click();
    await version(3).waitFor();
    expect(await version(3).textContent()).toContain("rolled back from v1");
    expect(await version(3).locator("[data-testid=history-current]").count()).toBe(1);
    expect(await page.locator("[data-testid=history-notice]").textContent()).toContain(
      "Deployed version 3",
    );
    const versions = await uiApi<{
      versions: { version: number; rolledBackFrom: number | null }[];
    }>(ui, "GET", `/api/workflows/${id}/versions`);
    expect(versions.body.versions.map((v) => [v.version, v.rolledBackFrom])).toEqual([
      [3, 1],
      [2, null],
      [1, null],
    ]);
    const wf = await uiApi<{ definition: unknown; deployedVersion: number }>(
      ui,
      "GET",
      `/api/workflows/${id}`,
    );
    expect([wf.body.deployedVersion, wf.body.definition]).toEqual([3, says("draft")]);

    // A draft that does not parse cannot be compared, and the panel says so.
    await page.getByRole("textbox", { name: "Workflow definition (JSON)" }).fill("{ not json");
    await page.locator("[data-testid=history-diff-unavailable]").waitFor();
  }, 240_000);
});

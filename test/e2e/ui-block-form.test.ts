/**
 * The block's side form in real headless Chromium against the real `npm start`: typing
 * in a field writes the block (its `next` kept) into the definition, an expression's
 * syntax error and an unknown name or block id show as you type, the names in scope are
 * offered and taken with the keyboard, a number out of its schema's bounds is flagged
 * under its field, and an emptied optional field leaves the definition.
 */
import fs from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/processes";
import { uiSessionOfFile, uiWorkflow } from "../helpers/ui-session";

const root = path.resolve(import.meta.dirname, "../..");
const ui = uiSessionOfFile("cellflow-ui-form-");

const DEFINITION = {
  inputs: [{ name: "n", type: "number" }],
  blocks: [
    { id: "score", type: "transform", expression: "inputs.n * 2", next: "fetch" },
    {
      id: "fetch",
      type: "http",
      method: "GET",
      url: "https://example.test/{{ inputs.n }}",
      next: "pause",
    },
    { id: "pause", type: "wait", ms: 1000, next: "lookup" },
    {
      id: "lookup",
      type: "enrichment",
      enrichmentId: "email_domain",
      inputs: { email: "row.email" },
    },
  ],
};

/** The definition the editor holds now, read from its JSON view. */
async function definition(page: Page): Promise<{ blocks: Record<string, unknown>[] }> {
  const text = await page.getByRole("textbox", { name: "Workflow definition (JSON)" }).inputValue();
  return JSON.parse(text) as { blocks: Record<string, unknown>[] };
}

async function until(check: () => Promise<boolean>): Promise<void> {
  expect(await waitFor(check, 10_000, 50)).toBe(true);
}

describe("the block form in a browser", () => {
  it("edits the selected block, checks expressions as you type, and completes names", async () => {
    const workflowId = await uiWorkflow(ui, "Form", DEFINITION);
    const { page } = ui;
    await page.goto(ui.app.signinUrl);
    await page.waitForURL(/\/tables$/);
    await page.goto(`${ui.app.url}/workflows/${workflowId}`);
    // The form is the selected block's: select it in the graph.
    await page.locator('[data-testid="graph-node-score"]').click();
    const expression = page.getByTestId("form-expression");
    await expression.waitFor();
    expect(await expression.inputValue()).toBe("inputs.n * 2");

    // A syntax error, with its position.
    await expression.fill("inputs.n *");
    await page.getByTestId("form-expression-error").waitFor();
    expect(await page.getByTestId("form-expression-error").textContent()).toMatch(
      /at character \d+/,
    );

    // An unknown root name and an unknown block id are warnings.
    await expression.fill("blokcs.fetch");
    await until(async () =>
      ((await page.getByTestId("form-expression-warning").textContent()) ?? "").includes("blokcs"),
    );
    await expression.fill("blocks.nope");
    await until(async () =>
      ((await page.getByTestId("form-expression-warning").textContent()) ?? "").includes("nope"),
    );
    expect(await page.getByTestId("form-expression-error").count()).toBe(0);

    // Completion from the keyboard: `bl` → blocks, then `.` → the other blocks' ids.
    await expression.fill("");
    await expression.pressSequentially("1 + bl");
    await page.getByTestId("form-expression-suggestions").waitFor();
    await page.keyboard.press("Enter");
    await until(async () => (await expression.inputValue()) === "1 + blocks");
    await page.keyboard.type(".");
    await page.getByTestId("form-expression-suggestions").waitFor();
    const offered = await page.getByTestId("form-expression-suggestion").allTextContents();
    expect(offered).toEqual(["blocks.fetch", "blocks.pause", "blocks.lookup"]);
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await until(async () => (await expression.inputValue()) === "1 + blocks.pause");
    expect(await page.getByTestId("form-expression-warning").count()).toBe(0);

    // The block in the definition: the new expression, its next kept.
    const score = (await definition(page)).blocks[0];
    expect(score).toEqual({
      id: "score",
      type: "transform",
      expression: "1 + blocks.pause",
      next: "fetch",
    });

    // Out of the schema's bounds, under the field; emptied, the key leaves the block.
    const timeout = page.getByTestId("form-timeoutMs");
    await timeout.fill("0");
    await until(
      async () =>
        (await page.getByTestId("form-issue-timeoutMs").textContent()) === "must be at least 1",
    );
    expect((await definition(page)).blocks[0]?.timeoutMs).toBe(0);
    await timeout.fill("");
    await page.getByTestId("form-issue-timeoutMs").waitFor({ state: "detached" });
    expect("timeoutMs" in ((await definition(page)).blocks[0] ?? {})).toBe(false);
  }, 240_000);

  it("shows each block type's own fields: a template url, wait's number-or-expression", async () => {
    const { page } = ui;
    await page.locator('[data-testid="graph-node-fetch"]').click();
    const url = page.getByTestId("form-url");
    await url.waitFor();
    expect(await page.getByTestId("form-method").inputValue()).toBe("GET");
    await url.fill("https://example.test/{{ inputs.m }}");
    await until(async () =>
      ((await page.getByTestId("form-url-warning").textContent()) ?? "").includes("no input “m”"),
    );
    await url.fill("");
    await until(
      async () => (await page.getByTestId("form-issue-url").textContent()) === "must not be empty",
    );
    expect((await definition(page)).blocks[1]).toMatchObject({ url: "", next: "pause" });

    await page.locator('[data-testid="graph-node-pause"]').click();
    const ms = page.getByTestId("form-ms");
    await ms.waitFor();
    expect(await ms.inputValue()).toBe("1000");
    await ms.fill("inputs.n * 1000");
    await until(async () => (await definition(page)).blocks[2]?.ms === "inputs.n * 1000");
    await ms.fill("-5");
    await until(
      async () => (await page.getByTestId("form-issue-ms").textContent()) === "must be at least 0",
    );
  }, 120_000);

  it("picks the enrichment from the catalogue and offers the inputs it expects", async () => {
    const { page } = ui;
    await page.locator('[data-testid="graph-node-lookup"]').click();
    const picker = page.getByTestId("form-enrichmentId");
    await page.locator('select[data-testid="form-enrichmentId"]').waitFor();
    expect(await picker.inputValue()).toBe("email_domain");
    expect(await page.getByTestId("form-inputs-key-0").inputValue()).toBe("email");
    await picker.selectOption("company_lookup");
    await page.getByTestId("form-inputs-fill").click();
    await until(async () =>
      ((await page.getByTestId("form-issue-inputs").textContent()) ?? "").includes(
        "domain: must not be empty",
      ),
    );
    expect(await page.getByTestId("form-inputs-warning").textContent()).toContain(
      "not read by it: email",
    );
    await page.getByTestId("form-inputs-value-1").fill("row.domain");
    await until(async () => {
      const lookup = (await definition(page)).blocks[3];
      return (
        JSON.stringify(lookup?.inputs) ===
        JSON.stringify({ email: "row.email", domain: "row.domain" })
      );
    });
    expect((await definition(page)).blocks[3]).toMatchObject({ enrichmentId: "company_lookup" });
    const shot = await page.getByTestId("form").screenshot();
    const shots = process.env.SAVE_SCREENSHOTS === "1" ? path.join(root, "docs") : ui.dataDir;
    fs.writeFileSync(path.join(shots, "workflow-block-form.png"), shot);
  }, 120_000);
});

/**
 * An AI column in real headless Chromium against one real `npm start` (issue 32's browser
 * test), step by step on the same table and page:
 * - the "+ AI column" dialog: the column chips insert `{{Column}}` references where the
 *   cursor is, the model and its endpoint, two output fields (text and number);
 * - "Try on this row" previews each output column's value from one real model call,
 *   writing nothing to the table;
 * - Create makes one workflow (the draft the try saved), the typed output columns and the
 *   group mapping the referenced columns to its inputs and the answer's fields to columns;
 * - running the table fills every row with the model's answers;
 * - a cell's details show the model, the tokens, the cost and, after a second run of the
 *   same row at temperature 0, that the answer came from the cache at no cost.
 * The model is the shared local LLM server (test/helpers/llm-server.ts) that the block's
 * endpoint points at: its answers are built from the schema and the prompt (llm-answers.ts)
 * and its token counts are ceil(characters / 4), so what each cell gets, uses and costs is
 * computed here from the prompt.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { estimateTokens } from "@/domain/llm-tokens";
import { seedOf, valueForSchema } from "../helpers/llm-answers";
import { type LlmServer, startLlmServer } from "../helpers/llm-server";
import { waitFor } from "../helpers/processes";
import { shownValues, uiApi, uiSessionOfFile } from "../helpers/ui-session";

const MODEL = "test-model";
const KEY = "sk-test-ai-column";
const SYSTEM = "Answer tersely.";
/** The model's price: 1 milli-credit an input token, 2 an output token. */
const PRICE = { inputPer1k: 1, outputPer1k: 2 };
// Read by the server at start (the server inherits this process's environment).
process.env.CELLFLOW_LLM_PRICES = JSON.stringify({ [MODEL]: PRICE });

const ui = uiSessionOfFile("cellflow-ui-ai-");
const api = <T = Record<string, unknown>>(method: string, p: string, body?: unknown) =>
  uiApi<T>(ui, method, p, body);

/** The JSON schema the dialog's two output fields make (checked on the saved block below). */
const SCHEMA = {
  type: "object",
  properties: { industry: { type: "string" }, employees: { type: "number" } },
  required: ["industry", "employees"],
  additionalProperties: false,
};

/** What the local server answers a prompt, and what the call uses and costs. */
function expected(prompt: string) {
  const answer = valueForSchema(SCHEMA, seedOf(prompt)) as { industry: string; employees: number };
  const inputTokens = estimateTokens(SYSTEM) + estimateTokens(prompt);
  const outputTokens = estimateTokens(JSON.stringify(answer));
  const milli = inputTokens * PRICE.inputPer1k + outputTokens * PRICE.outputPer1k;
  return { answer, inputTokens, outputTokens, credits: `${milli / 1000} credits` };
}
const ACME = expected("Classify Acme from FR.");
const GLOBEX = expected("Classify Globex from US.");
/** The user message of each request the server got. */
const prompts = (llm: LlmServer) =>
  llm.requests.map((r) => r.messages.find((m) => m.role === "user")?.content);

interface Row {
  id: string;
  data: Record<string, unknown>;
  cells: Record<
    string,
    { status: string; outcome: string | null; executionId: string } | undefined
  >;
}

describe("An AI column", () => {
  let llm: LlmServer;
  let tableId = "";
  let rowIds: string[] = [];
  const rows = async () =>
    (await api<{ rows: Row[] }>("GET", `/api/tables/${tableId}/rows`)).body.rows;
  const workflowsNamed = async (name: string) =>
    (
      await api<{ workflows: { id: string; name: string }[] }>("GET", "/api/workflows")
    ).body.workflows.filter((w) => w.name === name);
  const dialog = () => ui.page.getByTestId("ai-column-dialog");

  beforeAll(async () => {
    llm = await startLlmServer();
  });
  afterAll(async () => {
    await llm?.close();
  });

  it("fills the dialog: the column chips insert {{Column}} at the cursor", async () => {
    const { page } = ui;
    await page.goto(ui.app.signinUrl);
    await page.waitForURL(/\/tables$/);
    expect((await api("PUT", "/api/secrets/LLM_API_KEY", { value: KEY })).status).toBe(200);
    const t = await api<{ id: string }>("POST", "/api/tables", {
      name: "Companies",
      columns: [
        { id: "company", name: "Company", type: "text" },
        { id: "country", name: "Country", type: "text" },
      ],
    });
    expect(t.status).toBe(201);
    tableId = t.body.id;
    const ins = await api<{ rows: { id: string }[] }>("POST", `/api/tables/${tableId}/rows`, {
      rows: [
        { data: { company: "Acme", country: "FR" } },
        { data: { company: "Globex", country: "US" } },
      ],
    });
    expect(ins.status).toBe(201);
    rowIds = ins.body.rows.map((r) => r.id);

    await page.goto(`${ui.app.url}/tables/${tableId}`);
    await page.waitForSelector("[data-testid=stream-state][data-state=live]");
    await page.getByTestId("add-ai-column").click();
    const d = dialog();
    await d.waitFor();
    await d.getByLabel("Name", { exact: true }).fill("Classify");
    const prompt = d.getByTestId("ai-prompt");
    await prompt.fill("Classify ");
    await d.getByTestId("ai-insert-company").click();
    // The cursor is after the inserted reference: typing carries on from there.
    await page.keyboard.type(" from ");
    await d.getByTestId("ai-insert-country").click();
    await page.keyboard.type(".");
    expect(await prompt.inputValue()).toBe("Classify {{Company}} from {{Country}}.");
    expect(await d.getByTestId("ai-reads").textContent()).toContain("{{Company}}{{Country}}");

    await d.getByLabel("Model", { exact: true }).fill(MODEL);
    await d.getByText("System prompt and endpoint").click();
    await d.getByLabel("Endpoint (optional)").fill(llm.openaiBaseUrl);
    await d.getByLabel("System prompt (optional)").fill(SYSTEM);
    await d.getByLabel("Output 1: column name").fill("Industry");
    await d.getByTestId("ai-add-field").click();
    await d.getByLabel("Output 2: column name").fill("Employees");
    await d.getByLabel("Output 2: type").selectOption("number");
    expect(await d.locator(".editor-help", { hasText: "answers JSON" }).textContent()).toBe(
      "The model answers JSON with industry (text), employees (number); each fills its column.",
    );
  }, 240_000);

  // Needs POST /api/workflows/:id/test (issue 32 item 5).
  it("tries the first row: the preview shows each column's value, and the table is untouched", async () => {
    const d = dialog();
    expect(await d.getByTestId("ai-try-row").inputValue()).toBe(rowIds[0]);
    await d.getByTestId("ai-try").click();
    // A real, paid call: the first try asks first.
    await d.getByTestId("ai-try-confirm-yes").click();
    await d
      .locator("[data-testid=ai-try-preview], [data-testid=ai-try-error]")
      .first()
      .waitFor({ timeout: 30_000 });
    const failed = d.getByTestId("ai-try-error");
    expect(await failed.count(), (await failed.allTextContents()).join()).toBe(0);
    expect(await d.getByTestId("ai-try-value-industry").locator("td").textContent()).toBe(
      ACME.answer.industry,
    );
    expect(await d.getByTestId("ai-try-value-employees").locator("td").textContent()).toBe(
      String(ACME.answer.employees),
    );
    expect(prompts(llm)).toEqual(["Classify Acme from FR."]);
    expect(llm.requests[0]).toMatchObject({
      status: 200,
      inputTokens: ACME.inputTokens,
      outputTokens: ACME.outputTokens,
    });
    // The try was a paid call, charged at the model's price for the tokens it used.
    expect(await d.getByTestId("ai-try-cost").textContent()).toBe(`This try cost ${ACME.credits}.`);
    // Nothing ran on the table: no cell, no output value.
    for (const r of await rows()) {
      expect(r.cells).toEqual({});
      expect(r.data.industry).toBeUndefined();
    }
  }, 60_000);

  it("creates one workflow, the typed output columns and the group mapping both", async () => {
    const { page } = ui;
    await dialog().getByTestId("ai-create").click();
    await dialog().waitFor({ state: "detached" });
    await page.getByTestId("group-header-classify").waitFor();

    // The draft the try saved is the group's workflow: one, not two.
    const flows = await workflowsNamed("Classify");
    expect(flows).toHaveLength(1);
    const table = await api<{
      columns: unknown[];
      groups: Record<string, unknown>[];
    }>("GET", `/api/tables/${tableId}`);
    expect(table.body.columns).toEqual([
      { id: "company", name: "Company", type: "text" },
      { id: "country", name: "Country", type: "text" },
      { id: "industry", name: "Industry", type: "text" },
      { id: "employees", name: "Employees", type: "number" },
    ]);
    expect(table.body.groups).toEqual([
      expect.objectContaining({
        id: "classify",
        kind: "workflow",
        workflowId: flows[0]?.id,
        version: "live",
        inputs: { company: "company", country: "country" },
        outputs: [
          { columnId: "industry", from: "ai.industry" },
          { columnId: "employees", from: "ai.employees" },
        ],
        dependsOn: ["company", "country"],
        autoRun: false,
      }),
    ]);
    const wf = await api<{ definition: { inputs: unknown[]; blocks: unknown[] } }>(
      "GET",
      `/api/workflows/${flows[0]?.id}`,
    );
    expect(wf.body.definition.inputs).toEqual([
      { name: "company", type: "text", required: true },
      { name: "country", type: "text", required: true },
    ]);
    expect(wf.body.definition.blocks).toEqual([
      expect.objectContaining({
        id: "ai",
        type: "llm",
        provider: "openai",
        baseUrl: llm.openaiBaseUrl,
        model: MODEL,
        system: SYSTEM,
        prompt: "Classify {{ inputs.company }} from {{ inputs.country }}.",
        temperature: 0,
        jsonSchema: SCHEMA,
      }),
    ]);
  }, 60_000);

  it("runs the table: every row gets the model's answers", async () => {
    const { page } = ui;
    await page.getByTestId("run-all-menu").click();
    await page.getByRole("button", { name: "Run all rows" }).click();
    // A paid run asks first (its dry run's estimate); a free one starts at once.
    const started = await waitFor(async () => {
      const estimate = page.getByTestId("run-estimate");
      if (await estimate.isVisible())
        await page.getByRole("button", { name: "Run", exact: true }).click();
      const runs = await api<{ runs: unknown[] }>("GET", `/api/tables/${tableId}/runs`);
      return runs.body.runs.length > 0;
    }, 20_000);
    expect(started).toBe(true);
    await waitFor(
      async () => (await page.locator('[data-group=classify][data-outcome="ok"]').count()) === 2,
      30_000,
    );
    expect(await shownValues(page, "industry")).toEqual([
      ACME.answer.industry,
      GLOBEX.answer.industry,
    ]);
    expect(await shownValues(page, "employees")).toEqual([
      String(ACME.answer.employees),
      String(GLOBEX.answer.employees),
    ]);
    const byCompany = new Map((await rows()).map((r) => [r.data.company, r.data]));
    expect(byCompany.get("Acme")).toMatchObject(ACME.answer);
    expect(byCompany.get("Globex")).toMatchObject(GLOBEX.answer);
    expect(llm.requests.every((r) => r.apiKey === KEY && r.model === MODEL)).toBe(true);
    expect(prompts(llm).filter((p) => p === "Classify Globex from US.")).toHaveLength(1);
  }, 60_000);

  // Needs the llm block's details.llm, prices and cache (issue 32 items 1, 3 and 4).
  it("a cell's details show the model, tokens and cost, then a cache hit at no cost", async () => {
    const { page } = ui;
    const globex = page.locator("[data-testid=grid-row]").nth(1);
    await globex.locator("[data-group=classify] button.linklike").click();
    const details = page.getByRole("dialog", { name: "“Classify”" });
    await details.waitFor();
    const call = details.getByTestId("llm-call-ai");
    await call.waitFor({ timeout: 10_000 });
    expect(await call.getByTestId("llm-model").textContent()).toBe(MODEL);
    expect(await call.getByTestId("llm-input-tokens").textContent()).toBe(
      String(GLOBEX.inputTokens),
    );
    expect(await call.getByTestId("llm-output-tokens").textContent()).toBe(
      String(GLOBEX.outputTokens),
    );
    expect(await call.getByTestId("llm-cost").textContent()).toBe(GLOBEX.credits);
    expect(await call.getByTestId("llm-cached").textContent()).toBe("No");

    // The same row again at temperature 0: the answer comes from the cache, and the open
    // dialog follows the cell to its new attempt.
    const before = llm.requests.length;
    const rerun = await api("POST", `/api/tables/${tableId}/runs`, {
      mode: "all",
      rowIds: [rowIds[1]],
    });
    expect(rerun.status).toBe(202);
    await call.getByTestId("llm-cached").filter({ hasText: "Yes" }).waitFor({ timeout: 30_000 });
    expect(await call.getByTestId("llm-cost").textContent()).toBe("0 credits");
    expect(llm.requests.length).toBe(before);
  }, 60_000);
});

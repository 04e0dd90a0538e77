/**
 * The dry run of a table with an llm workflow group (services/estimate-llm.ts): each row's
 * prompt is rendered from the row's values as the workflow would see them and priced as
 * its call would be reserved (ceil(characters / 4) input tokens at the input price, the
 * output cap at the output price); a cell whose required input is missing costs nothing;
 * a call over the per-row budget is not counted; where the prompt reads what an earlier
 * block produces, or the llm block runs in a sub-workflow, the estimate says it is a lower
 * bound; past the first 10,000 cells prompts count at their fixed text, and it says so.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import type { RunEstimate } from "@/contracts/runs";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { workflowTable } from "../helpers/tables";

const MODEL = "dry-model";
const PRICE = { inputPer1k: 1, outputPer1k: 0.5 };
/** What a block without `maxTokens` asks for (DEFAULT_MAX_TOKENS in the token rule). */
const OUTPUT_CAP = 1024;
const saved = process.env.CELLFLOW_LLM_PRICES;

beforeAll(async () => {
  await useTestDatabase();
  process.env.CELLFLOW_LLM_PRICES = JSON.stringify({ [MODEL]: PRICE });
});
afterAll(() => {
  if (saved === undefined) delete process.env.CELLFLOW_LLM_PRICES;
  else process.env.CELLFLOW_LLM_PRICES = saved;
});

/** Milli-credits of one call whose prompt is `text`, as the reservation prices it. */
const callMilli = (text: string) =>
  Math.ceil(Math.ceil(text.length / 4) * PRICE.inputPer1k + OUTPUT_CAP * PRICE.outputPer1k);

const PROMPT = "Classify {{inputs.company}} from {{row.Country}}.";
const rendered = (company: string, country: string) => `Classify ${company} from ${country}.`;

async function llmTable(
  key: string,
  blocks: Schemas["WorkflowDefinition"]["blocks"],
  rows: Record<string, unknown>[],
): Promise<string> {
  const t = await workflowTable(key, {
    workflow: { inputs: [{ name: "company", type: "text", required: true }], blocks },
    columns: [
      { id: "company", name: "Company", type: "text" },
      { id: "country", name: "Country", type: "text" },
    ],
    outputs: { label: blocks[blocks.length - 1]?.id ?? "classify" },
    group: { inputs: { company: "company" } },
    rows,
  });
  return t.tableId;
}

async function dryRun(
  key: string,
  tableId: string,
  extra: Partial<Schemas["CreateRunRequest"]> = {},
): Promise<RunEstimate> {
  const res = await apiClient(key).POST("/api/tables/{id}/runs", {
    params: { path: { id: tableId } },
    body: { mode: "all", dryRun: true, ...extra },
  });
  expect(res.response.status, JSON.stringify(res.error ?? res.data)).toBe(200);
  return dataOf(res) as RunEstimate;
}

const classify = { id: "classify", type: "llm" as const, model: MODEL, prompt: PROMPT };

describe("the dry run of an llm workflow group", () => {
  it("renders each row's prompt and prices it as its call would be reserved; a row missing its required input costs nothing", async () => {
    const ws = await newWorkspace("llm-dry");
    const rows = [
      { company: "Acme", country: "France" },
      { company: "Globex Corporation International", country: "Germany" },
      { company: "Initech", country: "" },
      { country: "Spain" },
    ];
    const tableId = await llmTable(ws.key, [classify], rows);
    const expected =
      callMilli(rendered("Acme", "France")) +
      callMilli(rendered("Globex Corporation International", "Germany")) +
      callMilli(rendered("Initech", ""));
    const estimate = await dryRun(ws.key, tableId);
    expect(estimate).toMatchObject({
      rows: 4,
      cells: 4,
      estimatedCredits: expected / 1000,
      estimate: "complete",
      unknown: [],
      groups: [{ groupId: "g", cells: 4, credits: expected / 1000 }],
    });
  });

  it("a system message counts as written and a block's maxTokens is its output cap", async () => {
    const ws = await newWorkspace("llm-dry-system");
    const system = "You sort companies into industries. Answer with one word.";
    const tableId = await llmTable(
      ws.key,
      [{ ...classify, system, maxTokens: 200 }],
      [{ company: "Acme", country: "France" }],
    );
    const prompt = rendered("Acme", "France");
    const tokens = Math.ceil(system.length / 4) + Math.ceil(prompt.length / 4);
    const expected = Math.ceil(tokens * PRICE.inputPer1k + 200 * PRICE.outputPer1k);
    expect(await dryRun(ws.key, tableId)).toMatchObject({
      estimatedCredits: expected / 1000,
      estimate: "complete",
    });
  });

  it("under a per-row budget a call that costs more than the budget is not counted", async () => {
    const ws = await newWorkspace("llm-dry-budget");
    const short = { company: "A", country: "B" };
    const long = { company: "L".repeat(400), country: "B" };
    const tableId = await llmTable(ws.key, [classify], [short, long]);
    const cheap = callMilli(rendered(short.company, short.country));
    const dear = callMilli(rendered(long.company, long.country));
    expect(dear).toBeGreaterThan(cheap);
    const estimate = await dryRun(ws.key, tableId, { maxCreditsPerRow: cheap / 1000 });
    expect(estimate).toMatchObject({ estimatedCredits: cheap / 1000, estimate: "complete" });
  });

  it("a model without a price costs nothing", async () => {
    const ws = await newWorkspace("llm-dry-free");
    const tableId = await llmTable(
      ws.key,
      [{ ...classify, model: "not-priced" }],
      [{ company: "Acme", country: "France" }],
    );
    expect(await dryRun(ws.key, tableId)).toMatchObject({
      estimatedCredits: 0,
      estimate: "complete",
    });
  });

  it("a prompt that reads an earlier block's output is a lower bound, counted without it", async () => {
    const ws = await newWorkspace("llm-dry-blocks");
    const tableId = await llmTable(
      ws.key,
      [
        {
          id: "prep",
          type: "transform",
          expression: "'some long text the run computes'",
          next: "classify",
        },
        { ...classify, prompt: `{{blocks.prep}}${PROMPT}` },
      ],
      [{ company: "Acme", country: "France" }],
    );
    const estimate = await dryRun(ws.key, tableId);
    expect(estimate).toMatchObject({
      estimatedCredits: callMilli(rendered("Acme", "France")) / 1000,
      estimate: "lower_bound",
      unknown: [{ groupId: "g", reason: expect.stringContaining('llm block "classify"') }],
    });
  });

  it("an llm block in a sub-workflow counts at its prompt's fixed text, a lower bound", async () => {
    const ws = await newWorkspace("llm-dry-child");
    const child = dataOf(
      await apiClient(ws.key).POST("/api/workflows", {
        body: {
          name: "child",
          definition: {
            blocks: [{ ...classify, id: "inner", prompt: "Summarize {{inputs.text}}" }],
          },
        },
      }),
    ).id;
    const tableId = await llmTable(
      ws.key,
      [{ id: "call", type: "workflow", workflowId: child, inputs: { text: "inputs.company" } }],
      [{ company: "Acme", country: "France" }],
    );
    const estimate = await dryRun(ws.key, tableId);
    expect(estimate).toMatchObject({
      estimatedCredits: callMilli("Summarize ") / 1000,
      estimate: "lower_bound",
      unknown: [{ groupId: "g", reason: expect.stringContaining('llm block "inner"') }],
    });
  });

  it("past the first 10,000 cells prompts count at their fixed text, and the estimate says so", async () => {
    const ws = await newWorkspace("llm-dry-bound");
    const n = 10_050;
    const rows = Array.from({ length: n }, (_, i) => ({ company: `Company ${i}`, country: "FR" }));
    const tableId = await llmTable(ws.key, [classify], rows);
    const estimate = await dryRun(ws.key, tableId);
    let expected = 0;
    for (const row of rows.slice(0, 10_000))
      expected += callMilli(rendered(row.company, row.country));
    expected += (n - 10_000) * callMilli(rendered("", ""));
    expect(estimate).toMatchObject({
      cells: n,
      estimatedCredits: expected / 1000,
      estimate: "lower_bound",
      unknown: [{ groupId: "g", reason: expect.stringContaining("first 10000 cells") }],
    });
  }, 180_000);
});

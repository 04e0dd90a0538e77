/**
 * Money of llm calls end to end, on a worker, against the local LLM server: a run of an llm
 * workflow group is charged each call's real usage at CELLFLOW_LLM_PRICES (the ledger, GET
 * /api/usage by model, the run's creditsUsed, the cell's details), nothing stays reserved;
 * a run cap that fits N calls makes exactly N and halts; a per-row budget below a call's
 * estimate ends the cells `over_budget` without a call; a provider's absurd usage is charged
 * bounded (maxTokens out, 4× the estimate + 1,000 in) and the cells complete.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { cellCounts, useWorker, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { type LlmServer, startLlmServer } from "../helpers/llm-server";
import { waitFor } from "../helpers/processes";
import { workflowTable } from "../helpers/tables";

const PRICE = { inputPer1k: 1, outputPer1k: 10 };
const MODELS = ["gpt-usage", "gpt-cap", "gpt-budget", "gpt-absurd"] as const;
let server: LlmServer;
const saved = process.env.CELLFLOW_LLM_PRICES;

beforeAll(async () => {
  // Before the worker starts: it reads the prices from the environment it inherits.
  process.env.CELLFLOW_LLM_PRICES = JSON.stringify(
    Object.fromEntries(MODELS.map((m) => [m, PRICE])),
  );
  const { url } = await useTestDatabase();
  await useWorker(url, 6);
  server = await startLlmServer();
});
afterAll(async () => {
  await server.close();
  if (saved === undefined) delete process.env.CELLFLOW_LLM_PRICES;
  else process.env.CELLFLOW_LLM_PRICES = saved;
});

/** A workspace with the LLM key, and an llm workflow group over `rows` rows of `model`. */
async function llmTable(model: string, rows: number, maxTokens: number) {
  const ws = await newWorkspace(model);
  await apiClient(ws.key).PUT("/api/secrets/{name}", {
    params: { path: { name: "LLM_API_KEY" } },
    body: { value: "sk-money" },
  });
  const t = await workflowTable(ws.key, {
    workflow: {
      inputs: [],
      blocks: [
        {
          id: "classify",
          type: "llm",
          baseUrl: server.openaiBaseUrl,
          model,
          prompt: "Classify {{ row.name }}",
          maxTokens,
        },
      ],
    },
    outputs: { label: "classify" },
    columns: [{ id: "name", name: "name", type: "text" }],
    // Names of one length: every call has the same estimate.
    rows: Array.from({ length: rows }, (_, i) => ({ name: `Row ${String(i).padStart(2, "0")}` })),
  });
  return { ws, ...t };
}

/** What the server's answers of `model` cost, call by call (milli-credits). */
const served = (model: string) =>
  server.requests
    .filter((r) => r.model === model && r.status === 200)
    .map((r) => Math.ceil(r.inputTokens * PRICE.inputPer1k + r.outputTokens * PRICE.outputPer1k));

async function run(
  key: string,
  tableId: string,
  body: { maxCredits?: number; maxCreditsPerRow?: number } = {},
) {
  const started = startedRun(
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", ...body },
    }),
  );
  const status = await waitForDispatch(key, tableId, started.dispatchId, 60_000);
  // A halted run's admitted cells finish on their own.
  await waitFor(async () => {
    const c = await cellCounts(tableId);
    return (c.running ?? 0) === 0 && (c.queued ?? 0) === 0;
  }, 30_000);
  const view = dataOf(
    await apiClient(key).GET("/api/tables/{id}/runs/{dispatchId}", {
      params: { path: { id: tableId, dispatchId: started.dispatchId } },
    }),
  );
  return { status, view };
}

async function reservedMilli(workspaceId: string): Promise<number> {
  const [r] = await queryRows<{ m: number }>(
    getDatabase().db,
    sql`select reserved_milli::int as m from workspaces where id = ${workspaceId}`,
  );
  return r?.m ?? -1;
}

describe("llm calls of a run", () => {
  it("are charged their real usage: the ledger, usage by model, the run and each cell's details agree", async () => {
    const model = "gpt-usage";
    const { ws, tableId, rowIds } = await llmTable(model, 3, 100);
    const { status, view } = await run(ws.key, tableId);
    expect(status).toBe("completed");
    const costs = served(model);
    expect(costs).toHaveLength(3);
    const total = costs.reduce((a, b) => a + b, 0);
    // Each answered below its output cap of 100 tokens: charged less than reserved.
    expect(Math.max(...costs)).toBeLessThan(
      Math.ceil(4 * PRICE.inputPer1k + 100 * PRICE.outputPer1k),
    );
    expect(view.creditsUsed).toBe(total / 1000);
    const usage = dataOf(await apiClient(ws.key).GET("/api/usage"));
    expect(usage.bySource).toEqual([{ source: `llm:${model}`, credits: total / 1000 }]);
    expect(usage.used).toBe(total / 1000);
    expect(await reservedMilli(ws.id)).toBe(0);
    let fromDetails = 0;
    let cellTotals = 0;
    for (const rowId of rowIds) {
      const cell = dataOf(
        await apiClient(ws.key).GET("/api/tables/{id}/rows/{rowId}/cells/{groupId}", {
          params: { path: { id: tableId, rowId, groupId: "g" } },
        }),
      );
      const details = cell.details as {
        costCredits?: number;
        llm?: Record<string, { costCredits: number }>;
      };
      fromDetails += Math.round((details.llm?.classify?.costCredits ?? 0) * 1000);
      // The cell's own total is its llm calls' (one block here).
      cellTotals += Math.round((details.costCredits ?? Number.NaN) * 1000);
    }
    expect(fromDetails).toBe(total);
    expect(cellTotals).toBe(total);
  }, 90_000);

  it("a run cap that fits 3 calls makes exactly 3 and halts as run_credit_cap", async () => {
    const model = "gpt-cap";
    // An output cap of 2 tokens: the answer fills it, so each call costs its estimate.
    const { ws, tableId } = await llmTable(model, 6, 2);
    const each = Math.ceil(4 * PRICE.inputPer1k + 2 * PRICE.outputPer1k);
    const { status, view } = await run(ws.key, tableId, { maxCredits: (3 * each) / 1000 });
    expect(status).toBe("halted");
    const costs = served(model);
    expect(costs).toEqual([each, each, each]);
    expect(view).toMatchObject({
      haltReason: "run_credit_cap",
      maxCredits: (3 * each) / 1000,
      creditsUsed: (3 * each) / 1000,
    });
    expect(await cellCounts(tableId)).toEqual({ completed: 3 });
    expect(await reservedMilli(ws.id)).toBe(0);
  }, 90_000);

  it("a per-row budget below a call's estimate ends each cell over_budget, with no call and no charge", async () => {
    const model = "gpt-budget";
    const { ws, tableId } = await llmTable(model, 2, 2);
    const { status, view } = await run(ws.key, tableId, { maxCreditsPerRow: 0.01 });
    expect(status).toBe("completed");
    expect(served(model)).toEqual([]);
    expect(view.creditsUsed).toBe(0);
    const outcomes = await queryRows<{ outcome: string }>(
      getDatabase().db,
      sql`select outcome::text from cells where table_id = ${tableId}`,
    );
    expect(outcomes.map((o) => o.outcome)).toEqual(["over_budget", "over_budget"]);
    expect(await reservedMilli(ws.id)).toBe(0);
  }, 90_000);

  it("a provider's absurd usage is charged bounded and the cells complete, each call made once", async () => {
    const model = "gpt-absurd";
    const { ws, tableId } = await llmTable(model, 2, 100);
    // 1e20 output tokens priced 10 each: a figure over bigint's range, which the cell's
    // terminal write could not record (no integer count: the estimate is charged instead).
    server.options.usage = { prompt_tokens: 2 ** 53 - 1, completion_tokens: 1e20 };
    try {
      const { status, view } = await run(ws.key, tableId);
      expect(status).toBe("completed");
      expect(await cellCounts(tableId)).toEqual({ completed: 2 });
      const calls = server.requests.filter((r) => r.model === model && r.status === 200);
      expect(calls).toHaveLength(2);
      const costs = calls.map((c) =>
        Math.ceil(
          (4 * c.inputTokens + 1_000) * PRICE.inputPer1k + c.outputTokens * PRICE.outputPer1k,
        ),
      );
      expect(view.creditsUsed).toBe(((costs[0] ?? 0) + (costs[1] ?? 0)) / 1000);
      expect(await reservedMilli(ws.id)).toBe(0);
    } finally {
      delete server.options.usage;
    }
  }, 90_000);
});

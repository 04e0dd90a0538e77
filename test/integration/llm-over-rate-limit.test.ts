/**
 * An llm call that can never fit its tokens-per-minute limit (its prompt and maxTokens
 * reserve more than the whole minute allows), on a worker against the local LLM server:
 * the cell ends `error` at once with a message naming the limit and the call's
 * reservation — not retried by the block's retries, not left waiting for its deadline —
 * no request reaches the model, and the credits it reserved are given back.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { estimateTokens } from "@/domain/llm-tokens";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { useWorker, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { type LlmServer, startLlmServer } from "../helpers/llm-server";
import { workflowTable } from "../helpers/tables";

const MODEL = "gpt-too-big";
const TOKENS_PER_MINUTE = 100;
const MAX_TOKENS = 200;
let server: LlmServer;
const saved = {
  prices: process.env.CELLFLOW_LLM_PRICES,
  tpm: process.env.CELLFLOW_LLM_TOKENS_PER_MINUTE,
};
const restore = (name: string, value: string | undefined) => {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
};

beforeAll(async () => {
  // The worker runs in this process: it reads both when a call is planned.
  process.env.CELLFLOW_LLM_PRICES = JSON.stringify({
    [MODEL]: { inputPer1k: 1, outputPer1k: 10 },
  });
  process.env.CELLFLOW_LLM_TOKENS_PER_MINUTE = String(TOKENS_PER_MINUTE);
  const { url } = await useTestDatabase();
  await useWorker(url, 4);
  server = await startLlmServer();
});
afterAll(async () => {
  await server.close();
  restore("CELLFLOW_LLM_PRICES", saved.prices);
  restore("CELLFLOW_LLM_TOKENS_PER_MINUTE", saved.tpm);
});

describe("an llm call over the whole tokens per minute", () => {
  it("ends its cell error at once, naming the limit and the reservation, with no call and nothing reserved", async () => {
    const ws = await newWorkspace("over-rate");
    const api = apiClient(ws.key);
    await api.PUT("/api/secrets/{name}", {
      params: { path: { name: "LLM_API_KEY" } },
      body: { value: "sk-over" },
    });
    const prompt = "Classify {{ row.name }}";
    const { tableId, rowIds } = await workflowTable(ws.key, {
      workflow: {
        inputs: [],
        blocks: [
          {
            id: "classify",
            type: "llm",
            baseUrl: server.openaiBaseUrl,
            model: MODEL,
            prompt,
            maxTokens: MAX_TOKENS,
            // Retries that would wait minutes: the refusal must not use them.
            retry: { attempts: 10, backoffMs: 60_000 },
          },
        ],
      },
      outputs: { label: "classify" },
      columns: [{ id: "name", name: "name", type: "text" }],
      rows: [{ name: "Acme" }, { name: "Globex" }],
    });
    const started = startedRun(
      await api.POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all" },
      }),
    );
    const at = Date.now();
    expect(await waitForDispatch(ws.key, tableId, started.dispatchId, 30_000)).toBe("completed");
    expect(Date.now() - at).toBeLessThan(20_000);
    for (const [i, rowId] of rowIds.entries()) {
      const cell = dataOf(
        await api.GET("/api/tables/{id}/rows/{rowId}/cells/{groupId}", {
          params: { path: { id: tableId, rowId, groupId: "g" } },
        }),
      );
      const reserved = estimateTokens(`Classify ${["Acme", "Globex"][i]}`) + MAX_TOKENS;
      expect(cell.status).toBe("error");
      expect(cell.error).toContain(`reserves ${reserved} tokens`);
      expect(cell.error).toContain(`${TOKENS_PER_MINUTE} tokens per minute`);
      expect(cell.error).toContain(MODEL);
      expect(cell.blockErrors.classify).toContain("lower maxTokens or shorten the prompt");
    }
    expect(server.requests).toEqual([]);
    const [credits] = await queryRows<{ used: number; reserved: number }>(
      getDatabase().db,
      sql`select used_milli::int as used, reserved_milli::int as reserved from workspaces where id = ${ws.id}`,
    );
    expect(credits).toEqual({ used: 0, reserved: 0 });
  }, 60_000);
});

/**
 * A workflow cell with llm blocks records, in its `details.llm.<blockId>`, what each of
 * them took — model, tokens in and out (a repair's added), cost, cached — on the cell, as
 * GET …/cells/:groupId shows it, whether the cell completed or a later block failed it; a
 * workflow without llm blocks writes none.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { runToEnd, useWorker } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { type LlmServer, startLlmServer } from "../helpers/llm-server";
import { workflowTable } from "../helpers/tables";

let key: string;
let server: LlmServer;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 4);
  key = (await newWorkspace()).key;
  server = await startLlmServer();
  for (const [name, value] of Object.entries({
    LLM_API_KEY: "sk-details-openai",
    ANTHROPIC_API_KEY: "sk-details-anthropic",
  }))
    await apiClient(key).PUT("/api/secrets/{name}", {
      params: { path: { name } },
      body: { value },
    });
});
afterAll(() => server.close());

async function cellOf(blocks: Schemas["Block"][], outputs: Record<string, string>) {
  const { tableId, rowIds } = await workflowTable(key, {
    workflow: { inputs: [], blocks },
    outputs,
    rows: [{ name: "Ada" }],
    columns: [{ id: "name", name: "name", type: "text" }],
  });
  await runToEnd(key, tableId);
  const rowId = rowIds[0] as string;
  return dataOf(
    await apiClient(key).GET("/api/tables/{id}/rows/{rowId}/cells/{groupId}", {
      params: { path: { id: tableId, rowId, groupId: "g" } },
    }),
  );
}

const SCHEMA = {
  type: "object",
  properties: { label: { type: "string", enum: ["a", "b"] } },
  required: ["label"],
  additionalProperties: false,
};

describe("details.llm on the cell", () => {
  it("a completed cell: each llm block's model, tokens, cost and cached, a repair's tokens added", async () => {
    server.failNext(1, "schema-violation");
    const before = server.requests.length;
    const cell = await cellOf(
      [
        {
          id: "classify",
          type: "llm",
          baseUrl: server.openaiBaseUrl,
          model: "gpt-details",
          prompt: "Classify {{ row.name }}",
          jsonSchema: SCHEMA,
          next: "summary",
        },
        {
          id: "summary",
          type: "llm",
          provider: "anthropic",
          baseUrl: server.url,
          model: "claude-details",
          system: "One line.",
          prompt: "Summarize {{ row.name }}",
        },
      ],
      { label: "classify.label", text: "summary.text" },
    );
    expect(cell.status).toBe("completed");
    const calls = server.requests.slice(before);
    expect(calls.map((c) => c.dialect)).toEqual(["openai", "openai", "anthropic"]);
    const [answer, repair, summary] = calls;
    expect(cell.details).toEqual({
      costCredits: 0,
      llm: {
        classify: {
          model: "gpt-details",
          inputTokens: (answer?.inputTokens ?? 0) + (repair?.inputTokens ?? 0),
          outputTokens: (answer?.outputTokens ?? 0) + (repair?.outputTokens ?? 0),
          costCredits: 0,
          cached: false,
        },
        summary: {
          model: "claude-details",
          inputTokens: summary?.inputTokens,
          outputTokens: summary?.outputTokens,
          costCredits: 0,
          cached: false,
        },
      },
    });
  });

  it("a cell a later block failed keeps the details of the llm calls made before", async () => {
    const before = server.requests.length;
    const cell = await cellOf(
      [
        {
          id: "ask",
          type: "llm",
          baseUrl: server.openaiBaseUrl,
          model: "gpt-details",
          prompt: "Describe {{ row.name }}",
          next: "stop",
        },
        { id: "stop", type: "fail", message: "no" },
      ],
      { out: "ask.text" },
    );
    expect(cell.status).toBe("error");
    const [call] = server.requests.slice(before);
    expect(cell.details).toEqual({
      costCredits: 0,
      llm: {
        ask: {
          model: "gpt-details",
          inputTokens: call?.inputTokens,
          outputTokens: call?.outputTokens,
          costCredits: 0,
          cached: false,
        },
      },
    });
  });

  it("a workflow without llm blocks writes no llm details", async () => {
    const cell = await cellOf([{ id: "t", type: "transform", expression: "1 + 1" }], {
      out: "t",
    });
    expect(cell.status).toBe("completed");
    expect(cell.details).not.toHaveProperty("llm");
  });
});

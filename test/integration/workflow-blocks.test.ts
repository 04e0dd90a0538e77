/**
 * Block types end to end, from POST /runs through a worker to the cell, against real
 * HTTP endpoints on loopback: retries honour Retry-After; a timeout closes the socket;
 * foreach bounds its concurrency and fail-fast stops the rest; sub-workflows stop at the
 * depth cap and on cycles; deployed vs live versions; partial outputs reach events
 * before the terminal event.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { sleep } from "@/domain/sleep";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { useWorker } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { workflowTable } from "../helpers/tables";

let key: string;
let ep: Endpoint;
const db = () => getDatabase().db;

type Cell = { status: string; executionId: string; error?: string | null };
type Row = { id: string; data: Record<string, unknown>; cells: Record<string, Cell> };

async function workflow(
  blocks: Schemas["Block"][],
  inputs: Schemas["WorkflowInput"][] = [],
): Promise<string> {
  const r = await apiClient(key).POST("/api/workflows", {
    body: { name: "w", definition: { inputs, blocks } },
  });
  if (r.response.status !== 201)
    throw new Error(`workflow refused: ${JSON.stringify(r.error ?? r.data)}`);
  return dataOf(r).id;
}

/** A one-group table over `workflowId`, one row, run; returns the settled row. */
async function runOne(
  workflowId: string,
  from: string,
  opts: { version?: "live" | "deployed"; outputs?: { columnId: string; from: string }[] } = {},
): Promise<{ tableId: string; row: Row }> {
  const outputs = opts.outputs ?? [{ columnId: "out", from }];
  const { tableId, rowIds } = await workflowTable(key, {
    workflow: workflowId,
    outputs: Object.fromEntries(outputs.map((o) => [o.columnId, o.from])),
    group: { version: opts.version ?? "live" },
  });
  const rowId = rowIds[0] as string;
  await apiClient(key).POST("/api/tables/{id}/runs", {
    params: { path: { id: tableId } },
    body: { mode: "all" },
  });
  let row: Row | undefined;
  const settled = await waitFor(async () => {
    row = dataOf(
      await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
        params: { path: { id: tableId, rowId } },
      }),
    );
    return ["completed", "error", "cancelled"].includes(row.cells.g?.status ?? "");
  }, 60_000);
  if (!settled) throw new Error(`cell never settled: ${JSON.stringify(row)}`);
  return { tableId, row: row as Row };
}

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 10);
  key = (await newWorkspace()).key;
  ep = await startEndpoint();
});
afterAll(() => ep.close());

describe("http", () => {
  it("retries 503 within the policy, waiting at least the Retry-After it was given", async () => {
    ep.on("/flaky", async (_hit, nth) =>
      nth <= 2
        ? { status: 503, body: { busy: true }, headers: { "retry-after": "1" } }
        : { status: 200, body: { fine: nth } },
    );
    const wf = await workflow([
      {
        id: "call",
        type: "http",
        method: "GET",
        url: `${ep.url}/flaky`,
        retry: { attempts: 3, backoffMs: 10 },
      },
    ]);
    const { row } = await runOne(wf, "call.body");
    expect(row.cells.g?.status).toBe("completed");
    expect(row.data.out).toEqual({ fine: 3 });
    const hits = ep.hitsOf("/flaky");
    expect(hits).toHaveLength(3);
    expect((hits[1]?.at ?? 0) - (hits[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(hits[0]?.headers["idempotency-key"]).toBe(`${row.cells.g?.executionId}:call`);
  });

  it("a timeout aborts the request's socket and fails the cell with a plain message", async () => {
    ep.on("/hang", async () => "hang");
    const wf = await workflow([
      { id: "call", type: "http", method: "GET", url: `${ep.url}/hang`, timeoutMs: 300 },
    ]);
    const { row } = await runOne(wf, "call");
    expect(row.cells.g).toMatchObject({ status: "error" });
    expect(row.cells.g?.error).toContain("timed out after 300 ms");
    expect(await waitFor(() => ep.hitsOf("/hang")[0]?.aborted === true, 5_000)).toBe(true);
  });
});

describe("foreach", () => {
  it("never runs more items at once than its concurrency, and returns results in item order", async () => {
    ep.on("/item", async (hit) => {
      await sleep(100);
      return { status: 200, body: { i: Number(hit.query.get("i")) } };
    });
    const child = await workflow(
      [
        {
          id: "get",
          type: "http" as const,
          method: "GET" as const,
          url: `${ep.url}/item?i={{ inputs.item }}`,
        },
        { id: "pick", type: "transform" as const, expression: "blocks.get.body.i * 10" },
      ].map((b, i, all) => (i < all.length - 1 ? { ...b, next: all[i + 1]?.id } : b)),
    );
    const wf = await workflow([
      {
        id: "each",
        type: "foreach",
        items: "[1,2,3,4,5,6,7,8,9,10]",
        workflowId: child,
        concurrency: 3,
      },
    ]);
    const { row } = await runOne(wf, "each");
    expect(row.cells.g?.status).toBe("completed");
    expect(ep.maxInFlight("/item")).toBe(3);
    expect(row.data.out).toEqual({
      results: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => ({ status: "ok", output: i * 10 })),
      ok: 10,
      failed: 0,
    });
  });

  it("runs many items at once without piling listeners on one signal past Node's leak warning", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => {
      if (w.name === "MaxListenersExceededWarning") warnings.push(w.message);
    };
    process.on("warning", onWarning);
    try {
      const child = await workflow([{ id: "pause", type: "wait", ms: 200 }]);
      const wf = await workflow([
        {
          id: "each",
          type: "foreach",
          items: "[1..24]",
          workflowId: child,
          concurrency: 24,
        },
      ]);
      const { row } = await runOne(wf, "each");
      expect(row.cells.g?.status).toBe("completed");
      expect((row.data.out as { ok: number }).ok).toBe(24);
      // Node emits the warning on a process.nextTick after the listener that passed the
      // limit; one turn of the event loop drains every such tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("fail-fast stops the items still to run after one fails; continue collects failures", async () => {
    ep.on("/ff", async (hit) => {
      await sleep(50);
      return Number(hit.query.get("i")) === 2
        ? { status: 400, body: { bad: true } }
        : { status: 200 };
    });
    const child = await workflow([
      { id: "get", type: "http", method: "GET", url: `${ep.url}/ff?i={{ inputs.item }}` },
    ]);
    const items = "[1,2,3,4,5,6,7,8,9,10,11,12]";
    const fast = await workflow([
      { id: "each", type: "foreach", items, workflowId: child, concurrency: 2 },
    ]);
    const { row } = await runOne(fast, "each");
    expect(row.cells.g?.status).toBe("error");
    expect(row.cells.g?.error).toContain("item 1 failed");
    expect(ep.hitsOf("/ff").length).toBeLessThan(12);

    const cont = await workflow([
      {
        id: "each",
        type: "foreach",
        items,
        workflowId: child,
        concurrency: 2,
        failurePolicy: "continue",
      },
    ]);
    const again = await runOne(cont, "each");
    expect(again.row.cells.g?.status).toBe("completed");
    expect(again.row.data.out).toMatchObject({ ok: 11, failed: 1 });
  });
});

describe("sub-workflows", () => {
  it("maps inputs into a child and returns the child's result", async () => {
    const child = await workflow(
      [{ id: "double", type: "transform", expression: "inputs.n * 2" }],
      [{ name: "n", type: "number", required: true }],
    );
    const wf = await workflow([
      { id: "sub", type: "workflow", workflowId: child, inputs: { n: "21" } },
    ]);
    const { row } = await runOne(wf, "sub");
    expect(row.data.out).toBe(42);
  });

  it("a child that would pause (an approval) fails the calling block instead of pausing the parent", async () => {
    const child = await workflow([{ id: "ask", type: "approval" }]);
    const wf = await workflow([
      { id: "sub", type: "workflow", workflowId: child, retry: { attempts: 3, backoffMs: 1 } },
    ]);
    const { row } = await runOne(wf, "sub");
    expect(row.cells.g?.status).toBe("error");
    expect(row.cells.g?.error).toContain("a sub-workflow cannot pause");
  });

  it("nesting deeper than 8 fails with the path, and so does a cycle", async () => {
    let inner = await workflow([{ id: "leaf", type: "transform", expression: "'deep'" }]);
    for (let i = 0; i < 8; i++)
      inner = await workflow([{ id: "sub", type: "workflow", workflowId: inner }]);
    const deep = await runOne(inner, "sub");
    expect(deep.row.cells.g?.status).toBe("error");
    expect(deep.row.cells.g?.error).toContain("nest deeper than 8");

    const a = await workflow([{ id: "leaf", type: "transform", expression: "1" }]);
    const b = await workflow([{ id: "sub", type: "workflow", workflowId: a }]);
    await apiClient(key).PUT("/api/workflows/{id}", {
      params: { path: { id: a } },
      body: {
        name: "a",
        definition: { inputs: [], blocks: [{ id: "sub", type: "workflow", workflowId: b }] },
      },
    });
    const cyc = await runOne(a, "sub");
    expect(cyc.row.cells.g?.status).toBe("error");
    expect(cyc.row.cells.g?.error).toContain("workflow cycle");
  });
});

describe("versions", () => {
  it("a deployed group fails clearly without a deployed version and runs the deployed one, not the draft", async () => {
    const wf = await workflow([{ id: "v", type: "transform", expression: "'first'" }]);
    const none = await runOne(wf, "v", { version: "deployed" });
    expect(none.row.cells.g?.status).toBe("error");
    expect(none.row.cells.g?.error).toContain("no deployed version");
    expect(
      (await apiClient(key).POST("/api/workflows/{id}/deploy", { params: { path: { id: wf } } }))
        .response.status,
    ).toBe(201);
    await apiClient(key).PUT("/api/workflows/{id}", {
      params: { path: { id: wf } },
      body: {
        name: "w",
        definition: { inputs: [], blocks: [{ id: "v", type: "transform", expression: "'draft'" }] },
      },
    });
    expect((await runOne(wf, "v", { version: "deployed" })).row.data.out).toBe("first");
    expect((await runOne(wf, "v", { version: "live" })).row.data.out).toBe("draft");
  });
});

describe("live progress", () => {
  it("a finished block's outputs reach the events before the cell's terminal event", async () => {
    ep.on("/slow", async () => {
      await sleep(800);
      return { status: 200, body: "later" };
    });
    const wf = await workflow([
      { id: "first", type: "transform", expression: "'early'", next: "second" },
      { id: "second", type: "http", method: "GET", url: `${ep.url}/slow` },
    ]);
    const { tableId } = await runOne(wf, "first", {
      outputs: [
        { columnId: "a", from: "first" },
        { columnId: "b", from: "second.body" },
      ],
    });
    const events = await queryRows<{ status: string; outputs: Record<string, unknown> | null }>(
      db(),
      sql`select data->>'status' as status, data->'outputs' as outputs from events
           where table_id = ${tableId} and kind = 'cell' order by id`,
    );
    const partial = events.findIndex((e) => e.status === "running" && e.outputs?.a === "early");
    const terminal = events.findIndex((e) => e.status === "completed");
    expect(partial).toBeGreaterThanOrEqual(0);
    expect(partial).toBeLessThan(terminal);
    expect(events[terminal]?.outputs).toEqual({ a: "early", b: "later" });
  });
});

describe("secrets", () => {
  it("a secret used in a header reaches the endpoint and is redacted from outputs, events and errors", async () => {
    const token = "tok_9f8e7d6c5b4a";
    expect(
      (
        await apiClient(key).PUT("/api/secrets/{name}", {
          params: { path: { name: "API_TOKEN" } },
          body: { value: token },
        })
      ).response.status,
    ).toBe(200);
    ep.on("/echo", async (hit) => ({ status: 200, body: { saw: hit.headers.authorization } }));
    ep.on("/echo-fail", async (hit) => ({ status: 400, body: { bad: hit.headers.authorization } }));
    const headers = { authorization: "Bearer {{ secrets.API_TOKEN }}" };
    const ok = await workflow([
      { id: "call", type: "http", method: "GET", url: `${ep.url}/echo`, headers },
    ]);
    const good = await runOne(ok, "call.body");
    expect(ep.hitsOf("/echo")[0]?.headers.authorization).toBe(`Bearer ${token}`);
    expect(good.row.data.out).toEqual({ saw: "Bearer [redacted]" });

    const failing = await workflow([
      { id: "call", type: "http", method: "GET", url: `${ep.url}/echo-fail`, headers },
    ]);
    const bad = await runOne(failing, "call");
    expect(bad.row.cells.g?.status).toBe("error");
    for (const tableId of [good.tableId, bad.tableId]) {
      const [leaks] = await queryRows<{ n: number }>(
        db(),
        sql`select (select count(*) from events where table_id = ${tableId} and data::text like ${`%${token}%`})
                 + (select count(*) from cells where table_id = ${tableId}
                      and (coalesce(error, '') like ${`%${token}%`} or block_errors::text like ${`%${token}%`}))
                 + (select count(*) from rows where table_id = ${tableId} and data::text like ${`%${token}%`})
                 as n`,
      );
      expect(leaks?.n).toBe(0);
    }
  });
});

describe("llm", () => {
  it("asks an OpenAI-compatible endpoint with the workspace key and writes the structured answer", async () => {
    await apiClient(key).PUT("/api/secrets/{name}", {
      params: { path: { name: "LLM_API_KEY" } },
      body: { value: "sk-test-llm-key" },
    });
    ep.on("/v1/chat/completions", async () => ({
      status: 200,
      body: {
        id: "cmpl_1",
        object: "chat.completion",
        created: 1,
        model: "stub-model",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: '{"label":"big"}' },
            finish_reason: "stop",
          },
        ],
      },
    }));
    const wf = await workflow([
      {
        id: "ask",
        type: "llm",
        baseUrl: `${ep.url}/v1`,
        model: "stub-model",
        prompt: "Classify {{ row.out }}",
        jsonSchema: {
          type: "object",
          properties: { label: { type: "string" } },
          required: ["label"],
        },
      },
    ]);
    const { row } = await runOne(wf, "ask.label");
    expect(row.cells.g?.status).toBe("completed");
    expect(row.data.out).toBe("big");
    const hit = ep.hitsOf("/v1/chat/completions").at(-1);
    expect(hit?.headers.authorization).toBe("Bearer sk-test-llm-key");
  });
});

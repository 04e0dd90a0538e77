/**
 * What finished inside child runs is reused, at any depth: a `resume: true` run of a cell
 * whose sub-workflow (or foreach item) failed runs that child again, but the blocks inside
 * it that finished in the old execution are not called again (nor charged again, for
 * enrichments); what runs again sends the new execution's Idempotency-Keys. A recorded
 * item is reused only for the same item at that index: items that changed since are run
 * again, inner blocks included. A foreach of more than 10,000 items fails at once.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { CellAttemptsResponse } from "@/contracts/cells";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { runToEnd, useWorker } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { workflowTable } from "../helpers/tables";

let key: string;
let workspaceId: string;
let ep: Endpoint;
const db = () => getDatabase().db;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  // Without the result cache: a second provider call would be charged, not served.
  process.env.CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS = "0";
  await useWorker(url, 4);
  ({ key, id: workspaceId } = await newWorkspace());
  ep = await startEndpoint();
});
afterAll(() => ep.close());

type Definition = Schemas["WorkflowDefinition"];

async function workflow(definition: Definition): Promise<string> {
  return dataOf(await apiClient(key).POST("/api/workflows", { body: { name: "w", definition } }))
    .id;
}

/** `ids` as http blocks POSTing to `/<prefix>-<id>?i={{ inputs.item }}`, chained in order. */
function chain(prefix: string, ids: string[]): Definition["blocks"] {
  return ids.map((id, n) => ({
    id,
    type: "http" as const,
    method: "POST" as const,
    url: `${ep.url}/${prefix}-${id}?i={{ inputs.item }}`,
    ...(n < ids.length - 1 ? { next: ids[n + 1] } : {}),
  }));
}

async function attempts(tableId: string, rowId: string) {
  const res = await apiClient(key).GET("/api/tables/{id}/rows/{rowId}/cells/{groupId}/attempts", {
    params: { path: { id: tableId, rowId, groupId: "g" } },
  });
  return CellAttemptsResponse.parse(dataOf(res)).attempts;
}

/** How many calls each `?i=` value made to `path`. */
function callsBy(path: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const h of ep.hitsOf(path)) {
    const i = h.query.get("i") ?? "";
    out[i] = (out[i] ?? 0) + 1;
  }
  return out;
}

const failFirst = async (_hit: unknown, nth: number) =>
  nth === 1 ? { status: 500, body: { error: "not yet" } } : { status: 200, body: { n: nth } };

describe("resume: true reuses what finished inside children", () => {
  it("a sub-workflow two deep whose last inner block failed: its finished inner blocks (an enrichment among them) are neither called nor charged again", async () => {
    ep.on("/d2-one", async () => ({ status: 200, body: { one: true } }));
    ep.on("/d2-page", async () => ({
      status: 200,
      body: "<html><head><title>Inner</title></head></html>",
      headers: { "content-type": "text/html" },
    }));
    ep.on("/d2-two", failFirst);
    const leaf = await workflow({
      inputs: [],
      blocks: [
        { ...chain("d2", ["one"])[0], next: "meta" } as Definition["blocks"][number],
        {
          id: "meta",
          type: "enrichment",
          enrichmentId: "website_meta",
          inputs: { url: `"${ep.url}/d2-page"` },
          next: "two",
        },
        ...chain("d2", ["two"]),
      ],
    });
    const middle = await workflow({
      inputs: [],
      blocks: [{ id: "inner", type: "workflow", workflowId: leaf, inputs: { item: "'m'" } }],
    });
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: { inputs: [], blocks: [{ id: "sub", type: "workflow", workflowId: middle }] },
      outputs: { out: "sub" },
    });
    const rowId = rowIds[0] ?? "";
    expect(await runToEnd(key, tableId)).toBe("completed");
    const [failed] = await attempts(tableId, rowId);
    expect(failed).toMatchObject({ status: "error" });
    expect([ep.hitsOf("/d2-one"), ep.hitsOf("/d2-page"), ep.hitsOf("/d2-two")]).toEqual([
      [expect.anything()],
      [expect.anything()],
      [expect.anything()],
    ]);

    expect(await runToEnd(key, tableId, { mode: "failed", resume: true })).toBe("completed");
    const [resumed] = await attempts(tableId, rowId);
    expect(resumed).toMatchObject({ status: "completed", resumedFrom: failed?.executionId });
    // The inner blocks that finished were not called again; the failed one was, once more.
    expect(ep.hitsOf("/d2-one")).toHaveLength(1);
    expect(ep.hitsOf("/d2-page")).toHaveLength(1);
    expect(ep.hitsOf("/d2-two")).toHaveLength(2);
    // What ran again sent the new execution's keys (its child's, two deep).
    expect(ep.hitsOf("/d2-two")[1]?.headers["idempotency-key"]).toBe(
      `${resumed?.executionId}:sub:inner:two`,
    );
    // The inner enrichment was charged once, by the old execution.
    const charges = await queryRows<{ source: string; executionId: string }>(
      db(),
      sql`select source, execution_id as "executionId" from usage
           where workspace_id = ${workspaceId} and state = 'charged'`,
    );
    expect(charges).toEqual([
      { source: "website_meta@meta", executionId: `${failed?.executionId}:sub:inner` },
    ]);
    expect(resumed?.outputs).toMatchObject({ out: { body: { n: 2 } } });
  }, 60_000);

  it("a foreach item that failed in its third inner block reuses its first two when resumed; finished items run no block again", async () => {
    ep.on("/fi-c", async (hit, _nth) =>
      hit.query.get("i") === "1" && callsBy("/fi-c")["1"] === 1
        ? { status: 500, body: { no: 1 } }
        : { status: 200, body: { c: hit.query.get("i") } },
    );
    const child = await workflow({ inputs: [], blocks: chain("fi", ["a", "b", "c"]) });
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: {
        inputs: [],
        blocks: [
          { id: "each", type: "foreach", items: "[0, 1, 2]", workflowId: child, concurrency: 1 },
        ],
      },
      outputs: { out: "each" },
    });
    expect(await runToEnd(key, tableId)).toBe("completed");
    const [failed] = await attempts(tableId, rowIds[0] ?? "");
    expect(failed).toMatchObject({ status: "error" });
    expect([callsBy("/fi-a"), callsBy("/fi-b"), callsBy("/fi-c")]).toEqual([
      { "0": 1, "1": 1 },
      { "0": 1, "1": 1 },
      { "0": 1, "1": 1 },
    ]);

    expect(await runToEnd(key, tableId, { mode: "failed", resume: true })).toBe("completed");
    const [resumed] = await attempts(tableId, rowIds[0] ?? "");
    expect(resumed).toMatchObject({
      status: "completed",
      outputs: { out: { ok: 3, failed: 0 } },
    });
    // Item 0 was reused whole; item 1 ran only its third block; item 2 ran for the first time.
    expect([callsBy("/fi-a"), callsBy("/fi-b"), callsBy("/fi-c")]).toEqual([
      { "0": 1, "1": 1, "2": 1 },
      { "0": 1, "1": 1, "2": 1 },
      { "0": 1, "1": 2, "2": 1 },
    ]);
    const again = ep.hitsOf("/fi-c").filter((h) => h.query.get("i") === "1")[1];
    expect(again?.headers["idempotency-key"]).toBe(`${resumed?.executionId}:each:1:c`);
  }, 60_000);

  it("items that changed between the attempts are run again, their inner blocks included; unchanged ones are reused", async () => {
    ep.on("/ch-b", async (hit) =>
      hit.query.get("i") === "y" && callsBy("/ch-b").y === 1
        ? { status: 500, body: { no: "y" } }
        : { status: 200, body: { b: hit.query.get("i") } },
    );
    const child = await workflow({ inputs: [], blocks: chain("ch", ["a", "b"]) });
    const fanOut = (items: string): Definition => ({
      inputs: [],
      blocks: [{ id: "each", type: "foreach", items, workflowId: child, concurrency: 1 }],
    });
    const { tableId, rowIds, workflowId } = await workflowTable(key, {
      workflow: fanOut(`["x", "y", "z"]`),
      outputs: { out: "each" },
    });
    expect(await runToEnd(key, tableId)).toBe("completed");
    expect([callsBy("/ch-a"), callsBy("/ch-b")]).toEqual([
      { x: 1, y: 1 },
      { x: 1, y: 1 },
    ]);
    // The group runs the live draft: its items are now v (instead of x), y, z.
    const put = await apiClient(key).PUT("/api/workflows/{id}", {
      params: { path: { id: workflowId } },
      body: { definition: fanOut(`["v", "y", "z"]`) },
    });
    expect(put.response.status).toBe(200);

    expect(await runToEnd(key, tableId, { mode: "failed", resume: true })).toBe("completed");
    // Item 0 changed (x → v): not reused, both its blocks ran. Item 1 is the same y: its
    // first block was reused, its failed one ran again.
    expect([callsBy("/ch-a"), callsBy("/ch-b")]).toEqual([
      { x: 1, y: 1, v: 1, z: 1 },
      { x: 1, y: 2, v: 1, z: 1 },
    ]);
    const [resumed] = await attempts(tableId, rowIds[0] ?? "");
    const out = resumed?.outputs?.out as { results: { output: { body: { b: string } } }[] };
    expect(out.results.map((r) => r.output.body.b)).toEqual(["v", "y", "z"]);
  }, 60_000);
});

describe("resume: true, again and deeper", () => {
  it("a resume of a resume still reuses what the first execution finished inside the child", async () => {
    ep.on("/rr-two", async (_hit, nth) =>
      nth <= 2 ? { status: 500, body: { no: nth } } : { status: 200, body: { n: nth } },
    );
    const leaf = await workflow({ inputs: [], blocks: chain("rr", ["one", "two"]) });
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: { inputs: [], blocks: [{ id: "sub", type: "workflow", workflowId: leaf }] },
      outputs: { out: "sub" },
    });
    expect(await runToEnd(key, tableId)).toBe("completed");
    expect(await runToEnd(key, tableId, { mode: "failed", resume: true })).toBe("completed");
    const [second, first] = await attempts(tableId, rowIds[0] ?? "");
    expect(second).toMatchObject({ status: "error", resumedFrom: first?.executionId });
    expect(await runToEnd(key, tableId, { mode: "failed", resume: true })).toBe("completed");
    const [third] = await attempts(tableId, rowIds[0] ?? "");
    expect(third).toMatchObject({ status: "completed", resumedFrom: second?.executionId });
    expect(ep.hitsOf("/rr-one")).toHaveLength(1);
    expect(ep.hitsOf("/rr-two")).toHaveLength(3);
  }, 60_000);

  it("a sub-workflow whose fan-out ended with failed items under continue is run again by a resume: only those items are called again", async () => {
    ep.on("/nc-leaf", async (hit) =>
      hit.query.get("i") === "1" && callsBy("/nc-leaf")["1"] === 1
        ? { status: 500, body: { no: 1 } }
        : { status: 200, body: { i: hit.query.get("i") } },
    );
    ep.on("/nc-after", failFirst);
    const leaf = await workflow({ inputs: [], blocks: chain("nc", ["leaf"]) });
    const middle = await workflow({
      inputs: [],
      blocks: [
        {
          id: "each",
          type: "foreach",
          items: "[0, 1, 2]",
          workflowId: leaf,
          concurrency: 1,
          failurePolicy: "continue",
        },
      ],
    });
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: {
        inputs: [],
        blocks: [
          { id: "sub", type: "workflow", workflowId: middle, next: "after" },
          ...chain("nc", ["after"]),
        ],
      },
      outputs: { out: "sub" },
    });
    expect(await runToEnd(key, tableId)).toBe("completed");
    expect(callsBy("/nc-leaf")).toEqual({ "0": 1, "1": 1, "2": 1 });
    expect(await runToEnd(key, tableId, { mode: "failed", resume: true })).toBe("completed");
    expect(callsBy("/nc-leaf")).toEqual({ "0": 1, "1": 2, "2": 1 });
    const [resumed] = await attempts(tableId, rowIds[0] ?? "");
    expect(resumed).toMatchObject({
      status: "completed",
      outputs: { out: { ok: 3, failed: 0 } },
    });
  }, 60_000);
});

describe("the foreach item limit", () => {
  it("a foreach of more than 10,000 items fails at once with its count, running no item", async () => {
    const child = await workflow({
      inputs: [],
      blocks: [{ id: "t", type: "transform", expression: "inputs.item" }],
    });
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: {
        inputs: [],
        blocks: [
          {
            id: "each",
            type: "foreach",
            items: "[1..10001]",
            workflowId: child,
            retry: { attempts: 3, backoffMs: 1 },
          },
        ],
      },
      outputs: { out: "each" },
    });
    expect(await runToEnd(key, tableId)).toBe("completed");
    const [attempt] = await attempts(tableId, rowIds[0] ?? "");
    expect(attempt?.status).toBe("error");
    expect(attempt?.error).toContain("foreach: 10001 items, at most 10,000");
    expect(attempt?.childrenTotal).toBe(0);
  }, 60_000);
});

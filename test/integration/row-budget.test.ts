/**
 * Per-row budgets end to end on a worker, with loopback providers: a row whose next paid
 * call would take it past `maxCreditsPerRow` gets no such call — that cell ends
 * `completed` with outcome `over_budget`, its outputs blank, nothing more charged — while
 * the run goes on (not halted) and the other rows complete; the table's default applies
 * to runs created without their own and to auto-fired cells, and PATCH null clears it; in
 * a workflow the refused block ends the whole cell over_budget (its retries and its
 * parallel sibling included), the answered block charged once; the dry run caps a row at
 * its budget.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { useWorker, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { websiteMetaTableBody } from "../helpers/store-tables";
import { workflowTable } from "../helpers/tables";

const db = () => getDatabase().db;
let ep: Endpoint;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 6);
  ep = await startEndpoint();
  ep.on("/site", async () => ({
    status: 200,
    body: "<html><head><title>Hello</title></head></html>",
    headers: { "content-type": "text/html" },
  }));
  ep.on("/company", async (hit) => ({
    status: 200,
    body: { name: `Company of ${hit.query.get("domain") ?? ""}` },
  }));
});
afterAll(() => ep.close());

/** company_lookup's price (src/enrichments/company-lookup.ts). */
const LOOKUP = 5;

/**
 * Two paid website_meta groups (1 credit each): `meta` on `url` first, `second` on `url2`
 * (after it, by a dependency on `title`), both auto-run when `autoRun`.
 */
async function twoGroupTable(key: string, autoRun = false): Promise<string> {
  const meta = websiteMetaTableBody("two paid groups", {
    dependsOn: ["url"],
    autoRun,
  });
  const second = websiteMetaTableBody("two paid groups", {
    id: "second",
    name: "Second",
    inputs: { url: "url2" },
    outputs: [{ columnId: "title2", from: "title" }],
    dependsOn: ["url2", "title"],
    autoRun,
  });
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      ...meta,
      columns: [
        ...meta.columns,
        { id: "url2", name: "URL 2", type: "text" },
        { id: "title2", name: "Title 2", type: "text" },
      ],
      groups: [...meta.groups, ...second.groups],
    },
  });
  expect(t.response.status).toBe(201);
  return dataOf(t).id;
}

async function addRows(key: string, tableId: string, rows: Record<string, unknown>[]) {
  const r = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: { rows: rows.map((data) => ({ data })) },
  });
  return dataOf(r).rows.map((row) => row.id);
}

const cells = (tableId: string) =>
  queryRows<{ row_id: string; group_id: string; status: string; outcome: string | null }>(
    db(),
    sql`select row_id, group_id, status::text, outcome::text from cells where table_id = ${tableId}
         order by row_position, group_id`,
  );

const charged = async (workspaceId: string) => {
  const [r] = await queryRows<{ n: number; milli: number; reserved: number }>(
    db(),
    sql`select count(*) filter (where state = 'charged')::int as n,
               coalesce(sum(milli) filter (where state = 'charged'), 0)::int as milli,
               count(*) filter (where state = 'reserved')::int as reserved
          from usage where workspace_id = ${workspaceId}`,
  );
  return r;
};

const rowData = async (tableId: string) =>
  queryRows<{ id: string; data: Record<string, unknown> }>(
    db(),
    sql`select id, data from rows where table_id = ${tableId} order by position`,
  );

const settled = (tableId: string, count = 1) =>
  waitFor(async () => {
    const c = await cells(tableId);
    return c.length >= count && c.every((x) => x.status !== "queued" && x.status !== "running");
  }, 30_000);

const hitsFor = (what: string) =>
  ep.hitsOf("/site").filter((h) => h.query.get("i")?.startsWith(what)).length;

describe("a run's maxCreditsPerRow", () => {
  it("a row whose second paid call would pass it: that cell ends over_budget with no call, the first charged once, other rows complete, the run not halted", async () => {
    const ws = await newWorkspace("row-budget-run");
    const tableId = await twoGroupTable(ws.key);
    // Rows 0-2 ask both groups; rows 3-4 have no second URL (their second cell is skipped).
    await addRows(
      ws.key,
      tableId,
      Array.from({ length: 5 }, (_, i) => ({
        url: `${ep.url}/site?i=a${i}`,
        ...(i < 3 ? { url2: `${ep.url}/site?i=b${i}` } : {}),
      })),
    );
    for (const maxCreditsPerRow of [0, -1, 1.0005]) {
      const refused = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all", maxCreditsPerRow },
      });
      expect(refused.response.status).toBe(400);
    }
    const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", maxCreditsPerRow: 1.5 },
    });
    expect(run.response.status).toBe(202);
    const dispatchId = startedRun(run).dispatchId;
    expect(await waitForDispatch(ws.key, tableId, dispatchId)).toBe("completed");
    expect(await settled(tableId)).toBe(true);
    const byCell = await cells(tableId);
    expect(byCell.filter((c) => c.group_id === "meta").map((c) => c.outcome)).toEqual(
      Array(5).fill("ok"),
    );
    expect(byCell.filter((c) => c.group_id === "second").map((c) => c.outcome)).toEqual([
      "over_budget",
      "over_budget",
      "over_budget",
      "skipped",
      "skipped",
    ]);
    expect(byCell.every((c) => c.status === "completed")).toBe(true);
    // No second call was made; each first one was charged once.
    expect(hitsFor("b")).toBe(0);
    expect(hitsFor("a")).toBe(5);
    expect(await charged(ws.id)).toEqual({ n: 5, milli: 5000, reserved: 0 });
    for (const r of await rowData(tableId)) {
      expect(r.data.title).toBe("Hello");
      expect(r.data.title2 ?? null).toBeNull();
    }
    const view = dataOf(
      await apiClient(ws.key).GET("/api/tables/{id}/runs/{dispatchId}", {
        params: { path: { id: tableId, dispatchId } },
      }),
    );
    expect(view).toMatchObject({ haltReason: null, maxCreditsPerRow: 1.5, creditsUsed: 5 });
    // The cell says what was refused.
    const rowId = byCell[0]?.row_id ?? "";
    const cell = dataOf(
      await apiClient(ws.key).GET("/api/tables/{id}/rows/{rowId}/cells/{groupId}", {
        params: { path: { id: tableId, rowId, groupId: "second" } },
      }),
    );
    expect(cell).toMatchObject({
      status: "completed",
      outcome: "over_budget",
      details: { overBudget: { source: "website_meta", costCredits: 1 } },
    });
  }, 60_000);

  it("the dry run caps each row at the budget and says so", async () => {
    const ws = await newWorkspace("row-budget-dry");
    const tableId = await twoGroupTable(ws.key);
    await addRows(ws.key, tableId, [
      { url: `${ep.url}/site?i=d0`, url2: `${ep.url}/site?i=d1` },
      { url: `${ep.url}/site?i=d2`, url2: `${ep.url}/site?i=d3` },
    ]);
    const dry = (body: Schemas["CreateRunRequest"]) =>
      apiClient(ws.key).POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { ...body, dryRun: true },
      });
    const plain = dataOf(await dry({ mode: "all" }));
    expect(plain).toMatchObject({
      estimatedCredits: 4,
      maxCreditsPerRow: null,
      rowBudgetCapped: false,
    });
    const capped = dataOf(await dry({ mode: "all", maxCreditsPerRow: 1.5 }));
    expect(capped).toMatchObject({
      estimatedCredits: 3,
      maxCreditsPerRow: 1.5,
      rowBudgetCapped: true,
    });
    // A call costing more than the budget is never made.
    const below = dataOf(await dry({ mode: "all", maxCreditsPerRow: 0.5 }));
    expect(below).toMatchObject({ estimatedCredits: 0, maxCreditsPerRow: 0.5 });
  });
});

describe("the table's default", () => {
  it("PATCH sets it (GET shows it); runs without their own and auto-fired cells take it; PATCH null clears it", async () => {
    const ws = await newWorkspace("row-budget-table");
    const tableId = await twoGroupTable(ws.key, true);
    const patch = (maxCreditsPerRow: number | null) =>
      apiClient(ws.key).PATCH("/api/tables/{id}", {
        params: { path: { id: tableId } },
        body: { maxCreditsPerRow },
      });
    expect((await patch(0)).response.status).toBe(400);
    expect(dataOf(await patch(1))).toMatchObject({ maxCreditsPerRow: 1 });
    const got = await apiClient(ws.key).GET("/api/tables/{id}", {
      params: { path: { id: tableId } },
    });
    expect(dataOf(got).maxCreditsPerRow).toBe(1);

    // Auto-fire: the insert fires the first group; the cascade the second (once the title
    // is there), which counts in the insert's run and is over the default.
    const [auto] = await addRows(ws.key, tableId, [
      { url: `${ep.url}/site?i=e0`, url2: `${ep.url}/site?i=f0` },
    ]);
    expect(await settled(tableId, 2)).toBe(true);
    expect((await cells(tableId)).map((c) => [c.group_id, c.outcome])).toEqual([
      ["meta", "ok"],
      ["second", "over_budget"],
    ]);
    expect(hitsFor("f")).toBe(0);

    // A run without its own budget takes the default as it is when the run is created.
    expect(dataOf(await patch(0.5))).toMatchObject({ maxCreditsPerRow: 0.5 });
    const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", groupIds: ["second"], rowIds: [auto ?? ""] },
    });
    const dispatchId = startedRun(run).dispatchId;
    expect(await waitForDispatch(ws.key, tableId, dispatchId)).toBe("completed");
    const view = dataOf(
      await apiClient(ws.key).GET("/api/tables/{id}/runs/{dispatchId}", {
        params: { path: { id: tableId, dispatchId } },
      }),
    );
    expect(view.maxCreditsPerRow).toBe(0.5);
    expect((await cells(tableId)).find((c) => c.group_id === "second")?.outcome).toBe(
      "over_budget",
    );
    expect(hitsFor("f")).toBe(0);

    // Cleared: the next run has no budget and makes the second call.
    expect(dataOf(await patch(null))).toMatchObject({ maxCreditsPerRow: null });
    const free = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", groupIds: ["second"] },
    });
    expect(await waitForDispatch(ws.key, tableId, startedRun(free).dispatchId)).toBe("completed");
    expect((await cells(tableId)).find((c) => c.group_id === "second")?.outcome).toBe("ok");
    expect(hitsFor("f")).toBe(1);
    expect((await charged(ws.id))?.reserved).toBe(0);
  }, 60_000);
});

describe("a workflow with paid blocks", () => {
  async function lookupWorkspace(): Promise<{ id: string; key: string }> {
    const ws = await newWorkspace();
    const r = await apiClient(ws.key).PUT("/api/secrets/{name}", {
      params: { path: { name: "COMPANY_LOOKUP_URL_1" } },
      body: { value: `${ep.url}/company` },
    });
    expect(r.response.status).toBe(200);
    return ws;
  }

  const lookup = (id: string, prefix: string, more: Record<string, unknown> = {}) => ({
    id,
    type: "enrichment" as const,
    enrichmentId: "company_lookup",
    inputs: { domain: `'${prefix}-' & inputs.d` },
    ...more,
  });

  const lookups = (prefix: string) =>
    ep.hitsOf("/company").filter((h) => h.query.get("domain")?.startsWith(prefix)).length;

  it("two blocks in sequence, the second over the budget (with retries): the cell ends over_budget, no second call, the first charged once", async () => {
    const ws = await lookupWorkspace();
    const { tableId } = await workflowTable(ws.key, {
      workflow: {
        inputs: [{ name: "d", type: "text", required: true }],
        blocks: [
          lookup("a", "seq1", { next: "b" }),
          lookup("b", "seq2", { retry: { attempts: 3, backoffMs: 0 } }),
        ],
      },
      outputs: { out_a: "a.name", out_b: "b.name" },
      columns: [{ id: "d", name: "d", type: "text" }],
      group: { inputs: { d: "d" } },
      rows: [{ d: "x.example" }, { d: "y.example" }],
    });
    const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", maxCreditsPerRow: LOOKUP },
    });
    expect(await waitForDispatch(ws.key, tableId, startedRun(run).dispatchId)).toBe("completed");
    expect((await cells(tableId)).map((c) => [c.status, c.outcome])).toEqual([
      ["completed", "over_budget"],
      ["completed", "over_budget"],
    ]);
    expect(lookups("seq1")).toBe(2);
    expect(lookups("seq2")).toBe(0);
    expect(await charged(ws.id)).toEqual({ n: 2, milli: 2 * LOOKUP * 1000, reserved: 0 });
    for (const r of await rowData(tableId)) {
      expect(r.data.out_a ?? null).toBeNull();
      expect(r.data.out_b ?? null).toBeNull();
    }
  }, 60_000);

  it("two blocks in parallel reserving at once under a budget for one: exactly one call, the cell over_budget", async () => {
    const ws = await lookupWorkspace();
    const { tableId } = await workflowTable(ws.key, {
      workflow: {
        inputs: [{ name: "d", type: "text", required: true }],
        blocks: [
          { id: "start", type: "transform", expression: "inputs.d", next: ["a", "b"] },
          lookup("a", "par1"),
          lookup("b", "par2"),
        ],
      },
      outputs: { out_a: "a.name" },
      columns: [{ id: "d", name: "d", type: "text" }],
      group: { inputs: { d: "d" } },
      rows: [{ d: "p.example" }],
    });
    const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", maxCreditsPerRow: LOOKUP },
    });
    expect(await waitForDispatch(ws.key, tableId, startedRun(run).dispatchId)).toBe("completed");
    expect((await cells(tableId)).map((c) => c.outcome)).toEqual(["over_budget"]);
    // One of the two was admitted: at most its call was made, and nothing stays reserved.
    expect(lookups("par1") + lookups("par2")).toBeLessThanOrEqual(1);
    const money = await charged(ws.id);
    expect(money?.reserved).toBe(0);
    expect(money?.milli).toBeLessThanOrEqual(LOOKUP * 1000);
  }, 60_000);

  it("a budget the workflow fits in changes nothing", async () => {
    const ws = await lookupWorkspace();
    const { tableId } = await workflowTable(ws.key, {
      workflow: {
        inputs: [{ name: "d", type: "text", required: true }],
        blocks: [lookup("a", "fit1", { next: "b" }), lookup("b", "fit2")],
      },
      outputs: { out_b: "b.name" },
      columns: [{ id: "d", name: "d", type: "text" }],
      group: { inputs: { d: "d" } },
      rows: [{ d: "z.example" }],
    });
    const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", maxCreditsPerRow: 2 * LOOKUP },
    });
    expect(await waitForDispatch(ws.key, tableId, startedRun(run).dispatchId)).toBe("completed");
    expect((await cells(tableId)).map((c) => c.outcome)).toEqual(["ok"]);
    expect(await charged(ws.id)).toEqual({ n: 2, milli: 2 * LOOKUP * 1000, reserved: 0 });
  }, 60_000);
});

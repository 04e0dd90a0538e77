/**
 * The usage-limit halt end to end: a run of paid enrichments that uses up the month's
 * credits mid-way ends `halted` with exactly one `limit` event, no cell left queued,
 * every charge in the ledger once, and the cells it did not get to back to un-run.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { planLimits } from "@/limits/plans";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { cellCounts, useWorker, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { metaTable } from "../helpers/tables";

const db = () => getDatabase().db;
let ep: Endpoint;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 10);
  ep = await startEndpoint();
});
afterAll(() => ep.close());

it("credits used up mid-run: one limit event, a halted run, nothing queued, an exact ledger", async () => {
  const ws = await newWorkspace("halting");
  const cap = planLimits("free").monthlyCredits ?? 0;
  await db().execute(
    sql`update workspaces set plan = 'free', used_milli = ${(cap - 5) * 1000},
               credits_month = date_trunc('month', now() at time zone 'utc')::date where id = ${ws.id}`,
  );
  ep.on("/page", async () => ({
    status: 200,
    body: "<html><head><title>Hello</title></head></html>",
    headers: { "content-type": "text/html" },
  }));
  const tableId = await metaTable(ws.key, { siteUrl: ep.url, path: "/page", rows: 30 });
  const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
    params: { path: { id: tableId } },
    body: { mode: "all", window: 10 },
  });
  expect(await waitForDispatch(ws.key, tableId, startedRun(run).dispatchId)).toBe("halted");
  const [limits] = await queryRows<{ n: number }>(
    db(),
    sql`select count(*)::int as n from events where table_id = ${tableId} and kind = 'limit'`,
  );
  expect(limits?.n).toBe(1);
  // The admitted attempts finish on their own after the halt.
  expect(await waitFor(async () => ((await cellCounts(tableId)).running ?? 0) === 0, 20_000)).toBe(
    true,
  );
  const counts = await cellCounts(tableId);
  expect(counts.queued ?? 0).toBe(0);
  expect(counts.running ?? 0).toBe(0);
  expect(counts.completed).toBe(5);
  const [ledger] = await queryRows<{ n: number; sum: number }>(
    db(),
    sql`select count(*)::int as n, coalesce(sum(milli) / 1000, 0)::int as sum from usage where state = 'charged' and workspace_id = ${ws.id}`,
  );
  expect(ledger).toEqual({ n: 5, sum: 5 });
  const usage = await apiClient(ws.key).GET("/api/usage");
  expect(dataOf(usage).remaining).toBe(0);
}, 60_000);

it("an enrichment block inside a workflow is charged and halts the run like an enrichment group", async () => {
  const ws = await newWorkspace("halting-blocks");
  const cap = planLimits("free").monthlyCredits ?? 0;
  await db().execute(
    sql`update workspaces set plan = 'free', used_milli = ${(cap - 3) * 1000},
               credits_month = date_trunc('month', now() at time zone 'utc')::date where id = ${ws.id}`,
  );
  ep.on("/block-page", async () => ({
    status: 200,
    body: "<html><head><title>Block</title></head></html>",
    headers: { "content-type": "text/html" },
  }));
  const wf = await apiClient(ws.key).POST("/api/workflows", {
    body: {
      name: "meta in a workflow",
      definition: {
        inputs: [{ name: "url", required: true }],
        blocks: [
          {
            id: "meta",
            type: "enrichment",
            enrichmentId: "website_meta",
            inputs: { url: "inputs.url" },
          },
        ],
      },
    },
  });
  const t = await apiClient(ws.key).POST("/api/tables", {
    body: {
      name: "sites",
      columns: [
        { id: "url", name: "URL", type: "text" },
        { id: "title", name: "Title", type: "text" },
      ],
      groups: [
        {
          id: "g",
          name: "Meta",
          kind: "workflow",
          workflowId: dataOf(wf).id,
          inputs: { url: "url" },
          outputs: [{ columnId: "title", from: "meta.title" }],
        },
      ],
    },
  });
  await apiClient(ws.key).POST("/api/tables/{id}/rows", {
    params: { path: { id: dataOf(t).id } },
    body: {
      rows: Array.from({ length: 10 }, (_, i) => ({
        data: { url: `${ep.url}/block-page?i=${i}` },
      })),
    },
  });
  const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
    params: { path: { id: dataOf(t).id } },
    body: { mode: "all", window: 2 },
  });
  expect(await waitForDispatch(ws.key, dataOf(t).id, startedRun(run).dispatchId)).toBe("halted");
  expect(
    await waitFor(async () => ((await cellCounts(dataOf(t).id)).running ?? 0) === 0, 20_000),
  ).toBe(true);
  const counts = await cellCounts(dataOf(t).id);
  // Halted cells go back to un-run: not an error, not a workflow failure.
  expect(counts).toEqual({ completed: 3 });
  const ledger = await queryRows<{ source: string; credits: number }>(
    db(),
    sql`select source, (milli / 1000)::int as credits from usage where workspace_id = ${ws.id} and state = 'charged'`,
  );
  expect(ledger).toEqual(
    Array.from({ length: 3 }, () => ({ source: "website_meta@meta", credits: 1 })),
  );
  // Fewer calls than rows reached the provider: none was made unpaid.
  expect(ep.hitsOf("/block-page")).toHaveLength(3);
}, 60_000);

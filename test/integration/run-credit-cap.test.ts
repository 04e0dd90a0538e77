/**
 * A run's credit cap (`maxCredits`) end to end on a worker: a run of paid enrichments
 * that reaches its cap ends `halted` with `haltReason: "run_credit_cap"`, exactly as the
 * monthly halt does (one `limit` event, nothing queued, the unstarted cells un-run, each
 * charge once); a cap the run does not need changes nothing; and the cells an auto-run
 * fires meanwhile are neither counted against the cap nor stopped by it.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { cellCounts, useWorker, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { call } from "../helpers/raw-api";
import { websiteMetaTableBody } from "../helpers/store-tables";
import { metaTable } from "../helpers/tables";

const db = () => getDatabase().db;
let ep: Endpoint;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 10);
  ep = await startEndpoint();
  for (const path of ["/capped", "/enough", "/auto", "/manual"])
    ep.on(path, async () => ({
      status: 200,
      body: "<html><head><title>Hello</title></head></html>",
      headers: { "content-type": "text/html" },
    }));
});
afterAll(() => ep.close());

const limitEvents = (tableId: string) =>
  queryRows<{ data: Record<string, unknown> }>(
    db(),
    sql`select data from events where table_id = ${tableId} and kind = 'limit'`,
  );

const ledger = async (workspaceId: string) => {
  const [row] = await queryRows<{ n: number; sum: number }>(
    db(),
    sql`select count(*)::int as n, coalesce(sum(milli) / 1000, 0)::int as sum from usage where state = 'charged' and workspace_id = ${workspaceId}`,
  );
  return row;
};

const settled = async (tableId: string) =>
  waitFor(async () => {
    const c = await cellCounts(tableId);
    return (c.running ?? 0) === 0 && (c.queued ?? 0) === 0;
  }, 30_000);

it("maxCredits below what the run needs: exactly that many charged, halted as run_credit_cap, the rest un-run", async () => {
  const ws = await newWorkspace("capped");
  const tableId = await metaTable(ws.key, { siteUrl: ep.url, path: "/capped", rows: 12 });
  for (const maxCredits of [0, -1, 1.0005, "3"]) {
    // Wrong shapes among them ("3"), and more than the three decimals credits are kept to.
    const refused = await call("POST", `/api/tables/${tableId}/runs`, {
      key: ws.key,
      body: { mode: "all", maxCredits },
    });
    expect(refused.status).toBe(400);
  }
  const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
    params: { path: { id: tableId } },
    body: { mode: "all", window: 10, maxCredits: 5 },
  });
  expect(run.response.status).toBe(202);
  expect(await waitForDispatch(ws.key, tableId, startedRun(run).dispatchId)).toBe("halted");
  // The admitted attempts finish on their own after the halt.
  expect(await settled(tableId)).toBe(true);
  expect(await cellCounts(tableId)).toEqual({ completed: 5 });
  expect(await ledger(ws.id)).toEqual({ n: 5, sum: 5 });
  // No call was made unpaid.
  expect(ep.hitsOf("/capped")).toHaveLength(5);
  const events = await limitEvents(tableId);
  expect(events).toHaveLength(1);
  expect(events[0]?.data).toMatchObject({
    dispatchId: startedRun(run).dispatchId,
    reason: "run_credit_cap",
    haltReason: "run_credit_cap",
    message: expect.stringContaining("credit cap of 5 credits"),
  });
  const view = await apiClient(ws.key).GET("/api/tables/{id}/runs/{dispatchId}", {
    params: { path: { id: tableId, dispatchId: startedRun(run).dispatchId } },
  });
  expect(dataOf(view)).toMatchObject({
    status: "halted",
    haltReason: "run_credit_cap",
    maxCredits: 5,
    creditsUsed: 5,
  });
}, 60_000);

it("maxCredits at least what the run needs: the run completes, nothing halted", async () => {
  const ws = await newWorkspace("enough");
  const tableId = await metaTable(ws.key, { siteUrl: ep.url, path: "/enough", rows: 4 });
  const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
    params: { path: { id: tableId } },
    body: { mode: "all", maxCredits: 4 },
  });
  expect(await waitForDispatch(ws.key, tableId, startedRun(run).dispatchId)).toBe("completed");
  expect(await cellCounts(tableId)).toEqual({ completed: 4 });
  expect(await limitEvents(tableId)).toEqual([]);
  const view = await apiClient(ws.key).GET("/api/tables/{id}/runs/{dispatchId}", {
    params: { path: { id: tableId, dispatchId: startedRun(run).dispatchId } },
  });
  expect(dataOf(view)).toMatchObject({ haltReason: null, maxCredits: 4, creditsUsed: 4 });
}, 60_000);

it("cells auto-fired beside a capped run are not counted against its cap nor stopped by it", async () => {
  const ws = await newWorkspace("auto-beside-cap");
  const meta = websiteMetaTableBody("two groups");
  // The same website_meta group again, over the second URL column, firing on its own.
  const autoBody = websiteMetaTableBody("two groups", {
    id: "auto",
    name: "Auto",
    inputs: { url: "url2" },
    outputs: [{ columnId: "title2", from: "title" }],
    dependsOn: ["url2"],
    autoRun: true,
  });
  const t = await apiClient(ws.key).POST("/api/tables", {
    body: {
      ...meta,
      columns: [
        ...meta.columns,
        { id: "url2", name: "URL 2", type: "text" },
        { id: "title2", name: "Title 2", type: "text" },
      ],
      groups: [...meta.groups, ...autoBody.groups],
    },
  });
  expect(t.response.status).toBe(201);
  const tableId = dataOf(t).id;
  await apiClient(ws.key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: {
      rows: Array.from({ length: 6 }, (_, i) => ({
        data: { url: `${ep.url}/manual?i=${i}`, url2: `${ep.url}/auto?i=${i}` },
      })),
    },
  });
  // Started while the auto-run's cells are still being charged.
  const run = await apiClient(ws.key).POST("/api/tables/{id}/runs", {
    params: { path: { id: tableId } },
    body: { groupIds: ["meta"], mode: "all", maxCredits: 2 },
  });
  expect(await waitForDispatch(ws.key, tableId, startedRun(run).dispatchId)).toBe("halted");
  const runs = async () =>
    dataOf(
      await apiClient(ws.key).GET("/api/tables/{id}/runs", { params: { path: { id: tableId } } }),
    ).runs;
  expect(
    await waitFor(async () => (await runs()).every((r) => r.status !== "active"), 30_000),
  ).toBe(true);
  expect(await settled(tableId)).toBe(true);
  const byGroup = await queryRows<{ group_id: string; status: string; n: number }>(
    db(),
    sql`select group_id, status, count(*)::int as n from cells where table_id = ${tableId}
         group by group_id, status order by group_id`,
  );
  expect(byGroup).toEqual([
    { group_id: "auto", status: "completed", n: 6 },
    { group_id: "meta", status: "completed", n: 2 },
  ]);
  expect(await ledger(ws.id)).toEqual({ n: 8, sum: 8 });
  const auto = (await runs()).find((r) => r.id !== startedRun(run).dispatchId);
  expect(auto).toMatchObject({
    status: "completed",
    haltReason: null,
    maxCredits: null,
    // Counted for every run, capped or not: what its cells were charged.
    creditsUsed: 6,
  });
  const capped = (await runs()).find((r) => r.id === startedRun(run).dispatchId);
  expect(capped).toMatchObject({ haltReason: "run_credit_cap", creditsUsed: 2 });
}, 60_000);

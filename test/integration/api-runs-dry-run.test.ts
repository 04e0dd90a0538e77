/**
 * `POST /runs` with `dryRun: true`: the rows and cells it reports are what a run with the
 * same scope then stamps, it writes nothing (no dispatch, cell or event), and its credits
 * count paid enrichment groups and enrichment blocks (sub-workflows included) per cell,
 * a `foreach` over paid work making the figure a named lower bound. No worker runs here:
 * stamped cells stay queued, so the table's state is exactly what each case set up.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getBackend } from "@/backends/instance";
import type { Schemas } from "@/client/cellflow-client";
import { log } from "@/config/log";
import type { RunEstimate } from "@/contracts/runs";
import { createRun } from "@/services/runs";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { call } from "../helpers/raw-api";

const ROWS = 10;
const db = () => getDatabase().db;

let key: string;
let workspaceId: string;
let tableId: string;
let rowIds: string[];

async function workflow(name: string, blocks: Schemas["Block"][]): Promise<string> {
  const wf = await apiClient(key).POST("/api/workflows", {
    body: { name, definition: { inputs: [{ name: "domain", type: "text" }], blocks } },
  });
  if (wf.response.status !== 201)
    throw new Error(`workflow refused: ${JSON.stringify(wf.error ?? wf.data)}`);
  return dataOf(wf).id;
}

const lookup = (
  id: string,
  enrichmentId: Schemas["EnrichmentBlock"]["enrichmentId"] = "company_lookup",
): Schemas["EnrichmentBlock"] => ({
  id,
  type: "enrichment" as const,
  enrichmentId,
  inputs: enrichmentId === "website_meta" ? { url: "inputs.domain" } : { domain: "inputs.domain" },
});

beforeAll(async () => {
  await useTestDatabase();
  ({ key, id: workspaceId } = await newWorkspace());
  // Per cell: company_lookup 5 + website_meta 1 + a sub-workflow's company_lookup 5.
  const child = await workflow("child", [lookup("c")]);
  const paid = await workflow("paid", [
    { ...lookup("a"), next: "b" },
    { ...lookup("b", "website_meta"), next: "sub" },
    { id: "sub", type: "workflow", workflowId: child, inputs: { domain: "inputs.domain" } },
  ]);
  const loop = await workflow("loop", [
    { id: "each", type: "foreach", items: "[inputs.domain, inputs.domain]", workflowId: child },
  ]);
  const freeChild = await workflow("free child", [lookup("f", "email_domain")]);
  const freeLoop = await workflow("free loop", [
    { id: "each", type: "foreach", items: "[inputs.domain]", workflowId: freeChild },
  ]);
  const group = (id: string, workflowId: string) => ({
    id,
    name: id,
    kind: "workflow" as const,
    workflowId,
    inputs: { domain: "domain" },
  });
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "dry",
      columns: [{ id: "domain", name: "Domain", type: "text" }],
      groups: [
        {
          id: "co",
          name: "co",
          kind: "enrichment",
          enrichmentId: "company_lookup",
          inputs: { domain: "domain" },
        },
        group("wf", paid),
        group("lp", loop),
        group("free", freeLoop),
      ],
    },
  });
  if (t.response.status !== 201)
    throw new Error(`table refused: ${JSON.stringify(t.error ?? t.data)}`);
  tableId = dataOf(t).id;
  const rows = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: {
      rows: Array.from({ length: ROWS }, (_, i) => ({ data: { domain: `d${i}.example` } })),
    },
  });
  rowIds = dataOf(rows).rows.map((r) => r.id);
});

const runs = (body: Schemas["CreateRunRequest"]) =>
  apiClient(key).POST("/api/tables/{id}/runs", { params: { path: { id: tableId } }, body });
/** For bodies of the wrong shape, which the typed client cannot send. */
const rawRuns = (body: unknown) => call("POST", `/api/tables/${tableId}/runs`, { key, body });

async function dryRun(body: Schemas["CreateRunRequest"]): Promise<RunEstimate> {
  const res = await runs({ ...body, dryRun: true });
  expect(res.response.status, JSON.stringify(res.error ?? res.data)).toBe(200);
  return dataOf(res) as RunEstimate;
}

/**
 * Cells in every state a mode tells apart: some missing, the rest completed, error,
 * cancelled or queued, differently per group.
 */
async function mixedCells(): Promise<void> {
  await db().execute(sql`delete from cells where table_id = ${tableId}`);
  const run = await runs({ mode: "all" });
  expect(run.response.status).toBe(202);
  await db().execute(sql`delete from cells where table_id = ${tableId}
    and (row_position % 5 = 4 or (group_id = 'wf' and row_position % 3 = 0))`);
  await db().execute(sql`update cells
      set status = (array['completed', 'error', 'cancelled', 'queued'])[((row_position + length(group_id)) % 4) + 1]::cell_status
    where table_id = ${tableId}`);
}

/** Everything a run writes, as one comparable value. */
async function footprint(): Promise<unknown> {
  return queryRows(
    db(),
    sql`select (select count(*)::int from dispatches where table_id = ${tableId}) as dispatches,
               (select count(*)::int from events where table_id = ${tableId}) as events,
               (select count(*)::int from graphile_worker.jobs) as jobs,
               (select md5(coalesce(string_agg(row_id || group_id || status || execution_id || coalesce(dispatch_id, ''), ',' order by row_id, group_id), ''))
                  from cells where table_id = ${tableId}) as cells`,
  );
}

describe("a dry run", () => {
  it("reports the rows and cells the same run then stamps, in every mode and scope", async () => {
    const scopes: Schemas["CreateRunRequest"][] = [
      { mode: "all" },
      { mode: "incomplete" },
      { mode: "new" },
      { mode: "incomplete", groupIds: ["wf"] },
      { mode: "new", groupIds: ["co", "wf"] },
      {
        mode: "all",
        rowIds: [
          rowIds[1] as string,
          rowIds[3] as string,
          rowIds[4] as string,
          rowIds[8] as string,
        ],
      },
      { mode: "incomplete", limit: 3 },
      { mode: "new", limit: 2, groupIds: ["wf", "lp"] },
      {
        mode: "incomplete",
        rowIds: [
          rowIds[0] as string,
          rowIds[4] as string,
          rowIds[6] as string,
          rowIds[9] as string,
        ],
        limit: 2,
      },
      { mode: "failed" },
      { mode: "failed", groupIds: ["wf"], limit: 2 },
    ];
    for (const scope of scopes) {
      await mixedCells();
      const dry = await dryRun(scope);
      const real = await runs(scope);
      expect(real.response.status).toBe(202);
      const { dispatchId, stamped } = startedRun(real);
      const [did] = await queryRows<{ rows: number; cells: number }>(
        db(),
        sql`select count(distinct row_id)::int as rows, count(*)::int as cells
              from cells where dispatch_id = ${dispatchId}`,
      );
      const label = JSON.stringify(scope);
      expect({ rows: dry.rows, cells: dry.cells }, label).toEqual(did);
      expect(dry.cells, label).toBe(stamped);
      expect(dry.cells, label).toBe(dry.groups.reduce((n, g) => n + g.cells, 0));
      expect(dry.rows, label).toBeGreaterThan(0);
    }
  });

  it("writes nothing: no dispatch, no cell change, no event, no job", async () => {
    await mixedCells();
    const before = await footprint();
    for (const mode of ["all", "incomplete", "new"] as const) await dryRun({ mode });
    await dryRun({ mode: "all", groupIds: ["co"], rowIds: [rowIds[2] as string], limit: 1 });
    expect(await footprint()).toEqual(before);
  });

  it("charges enrichment groups and enrichment blocks, sub-workflows included, per cell", async () => {
    await db().execute(sql`delete from cells where table_id = ${tableId}`);
    const est = await dryRun({ mode: "all", groupIds: ["co", "wf"] });
    expect(est).toMatchObject({
      rows: ROWS,
      cells: 2 * ROWS,
      estimatedCredits: 5 * ROWS + 11 * ROWS,
      estimate: "complete",
      unknown: [],
      groups: [
        { groupId: "co", cells: ROWS, credits: 5 * ROWS },
        { groupId: "wf", cells: ROWS, credits: 11 * ROWS },
      ],
    });
    const scoped = await dryRun({ mode: "all", groupIds: ["wf"], limit: 3 });
    expect(scoped).toMatchObject({ rows: 3, cells: 3, estimatedCredits: 33 });
  });

  it("a foreach over paid work makes the estimate a lower bound naming its group", async () => {
    await db().execute(sql`delete from cells where table_id = ${tableId}`);
    const est = await dryRun({ mode: "all" });
    expect(est.estimate).toBe("lower_bound");
    expect(est.unknown.map((u) => u.groupId)).toEqual(["lp"]);
    expect(est.unknown[0]?.reason).toContain("foreach");
    expect(est.estimatedCredits).toBe(16 * ROWS);
    // A foreach whose items call only free enrichments costs nothing, knowably.
    const free = await dryRun({ mode: "all", groupIds: ["free"] });
    expect(free).toMatchObject({ estimate: "complete", estimatedCredits: 0, cells: ROWS });
  });

  it("costs nothing and counts nothing when no cell is eligible", async () => {
    await mixedCells();
    await runs({ mode: "all" });
    const est = await dryRun({ mode: "new" });
    expect(est).toMatchObject({ rows: 0, cells: 0, estimatedCredits: 0, estimate: "complete" });
  });

  it("refuses bad input like a run does: 400 on bad fields, 404 on a foreign table", async () => {
    const bad: unknown[] = [
      { mode: "all", dryRun: "yes" },
      { mode: "all", dryRun: 1 },
      { mode: "sometimes", dryRun: true },
      { mode: "all", dryRun: true, groupIds: ["nope"] },
      { mode: "all", dryRun: true, limit: 0 },
      { mode: "all", dryRun: true, rowIds: [] },
      { mode: "all", dryRun: true, extra: 1 },
    ];
    for (const body of bad) expect((await rawRuns(body)).status, JSON.stringify(body)).toBe(400);
    const other = (await newWorkspace()).key;
    const foreign = await apiClient(other).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", dryRun: true },
    });
    expect(foreign.response.status).toBe(404);
  });

  it("a dry run never starts through the run service (a run hook's body): 400, nothing written", async () => {
    await mixedCells();
    const before = await footprint();
    const ctx = { db: db(), workspaceId, log: log(), backend: getBackend() };
    const run = await createRun(ctx, tableId, { mode: "all", dryRun: true });
    expect(run.ok).toBe(false);
    expect(await footprint()).toEqual(before);
  });
});

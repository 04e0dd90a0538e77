/**
 * Charged only for answers, through the HTTP API with a worker and a loopback provider:
 * a paid lookup costs its price only when a provider answered with a result and the write
 * that records it won its fence. Misses, failures, a Stop mid-call, an answer whose write
 * lost to a newer run and a cached answer cost nothing; an answer nobody was charged for
 * is not served free from the cache to a later run;
 * every reservation is given back; usage, the run's `creditsUsed` and the cells'
 * `details.costCredits` say the same.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { cellCounts, runToEnd, useWorker, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { enrichmentTableBody } from "../helpers/store-tables";
import { workflowTable } from "../helpers/tables";

/** company_lookup's price (src/enrichments/company-lookup.ts). */
const COST = 5;

let ep: Endpoint;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 4);
  ep = await startEndpoint();
});

afterAll(async () => {
  await ep.close();
});

/** A workspace whose company_lookup asks `ep` at `path`. */
async function workspace(path: string): Promise<string> {
  const { key } = await newWorkspace();
  const r = await apiClient(key).PUT("/api/secrets/{name}", {
    params: { path: { name: "COMPANY_LOOKUP_URL_1" } },
    body: { value: `${ep.url}${path}` },
  });
  expect(r.response.status).toBe(200);
  return key;
}

/** A company_lookup table over `domains`, one row each; its id and row ids. */
async function companyTable(
  key: string,
  domains: string[],
): Promise<{ tableId: string; rowIds: string[] }> {
  const t = await apiClient(key).POST("/api/tables", {
    body: enrichmentTableBody("companies", {
      enrichmentId: "company_lookup",
      inputs: { domain: "domain" },
      outputs: { company: "name" },
    }),
  });
  const tableId = dataOf(t).id;
  const rows = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: { rows: domains.map((domain) => ({ data: { domain } })) },
  });
  return { tableId, rowIds: dataOf(rows).rows.map((r) => r.id) };
}

const usage = async (key: string) => dataOf(await apiClient(key).GET("/api/usage"));

async function cell(
  key: string,
  tableId: string,
  rowId: string,
): Promise<Schemas["CellWithDetails"]> {
  return dataOf(
    await apiClient(key).GET("/api/tables/{id}/rows/{rowId}/cells/{groupId}", {
      params: { path: { id: tableId, rowId, groupId: "g" } },
    }),
  );
}

const costOf = (c: Schemas["CellWithDetails"]) => Number(c.details.costCredits ?? 0);

const found = (domain: string) => ({ status: 200, body: { name: `Company of ${domain}` } });

describe("a paid lookup is charged only for answers", () => {
  it("12 rows, 4 found, 5 not found, 3 failing: usage moves by 4 × 5, what the cells' details say", async () => {
    const key = await workspace("/mixed");
    const domains = Array.from({ length: 12 }, (_, i) => `mixed-${i}.example`);
    ep.on("/mixed", async (hit) => {
      const i = Number(hit.query.get("domain")?.split("-")[1]?.split(".")[0]);
      if (i < 4) return found(hit.query.get("domain") ?? "");
      if (i < 9) return { status: 404, body: { error: "no such company" } };
      return { status: 500, body: { error: "provider down" } };
    });
    const { tableId, rowIds } = await companyTable(key, domains);
    const before = await usage(key);
    const run = startedRun(
      await apiClient(key).POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all" },
      }),
    );
    expect(await waitForDispatch(key, tableId, run.dispatchId)).toBe("completed");
    const after = await usage(key);
    expect(after.used - before.used).toBe(4 * COST);
    expect(after.reserved).toBe(0);
    expect(after.bySource).toEqual([{ source: "company_lookup", credits: 4 * COST }]);
    const cells = await Promise.all(rowIds.map((rowId) => cell(key, tableId, rowId)));
    expect(cells.map((c) => c.outcome ?? c.status)).toEqual([
      ...Array(4).fill("ok"),
      ...Array(5).fill("not_found"),
      ...Array(3).fill("error"),
    ]);
    expect(cells.map(costOf)).toEqual([...Array(4).fill(COST), ...Array(8).fill(0)]);
    expect(cells.reduce((sum, c) => sum + costOf(c), 0)).toBe(after.used - before.used);
    // The run counts what its cells were charged; each attempt carries its details.
    const view = await apiClient(key).GET("/api/tables/{id}/runs/{dispatchId}", {
      params: { path: { id: tableId, dispatchId: run.dispatchId } },
    });
    expect(dataOf(view).creditsUsed).toBe(4 * COST);
    const attempts = await apiClient(key).GET(
      "/api/tables/{id}/rows/{rowId}/cells/{groupId}/attempts",
      { params: { path: { id: tableId, rowId: rowIds[0] as string, groupId: "g" } } },
    );
    expect(dataOf(attempts).attempts[0]?.details).toMatchObject({
      enrichmentId: "company_lookup",
      costCredits: COST,
    });
  });

  it("a Stop while paid calls are in flight charges nothing, now or when the answers come late", async () => {
    const key = await workspace("/slow");
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    ep.on("/slow", async (hit) => {
      await gate;
      return found(hit.query.get("domain") ?? "");
    });
    const { tableId } = await companyTable(
      key,
      Array.from({ length: 6 }, (_, i) => `slow-${i}.example`),
    );
    const before = await usage(key);
    const run = startedRun(
      await apiClient(key).POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all" },
      }),
    );
    // Calls in flight, their credits reserved.
    expect(await waitFor(async () => ep.hitsOf("/slow").length >= 2, 20_000)).toBe(true);
    expect((await usage(key)).reserved).toBeGreaterThanOrEqual(2 * COST);
    const stop = await apiClient(key).POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id: tableId } },
      body: {},
    });
    expect(stop.response.status).toBe(200);
    expect(await waitForDispatch(key, tableId, run.dispatchId)).toBe("cancelled");
    open();
    // Whatever the providers say now reaches no cell: every carrier has let go of its row
    // (its attempt ended, after the answers came or its call was cut), nothing charged.
    expect(
      await waitFor(async () => {
        const [held] = await queryRows<{ n: number }>(
          getDatabase().db,
          sql`select count(*)::int as n from pg_locks
               where locktype = 'advisory' and granted
                 and database = (select oid from pg_database where datname = current_database())`,
        );
        return (held?.n ?? 0) === 0 && (await cellCounts(tableId)).running === undefined;
      }, 20_000),
    ).toBe(true);
    const after = await usage(key);
    expect(after.used).toBe(before.used);
    expect(after.reserved).toBe(0);
  });

  it("an answer whose write lost to a newer run is not charged; the newer run pays for its own, or is served it free while the old write is pending", async () => {
    const key = await workspace("/raced");
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    ep.on("/raced", async (hit) => {
      await gate;
      return found(hit.query.get("domain") ?? "");
    });
    const { tableId, rowIds } = await companyTable(key, ["raced.example"]);
    const rowId = rowIds[0] as string;
    const before = await usage(key);
    const first = startedRun(
      await apiClient(key).POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all" },
      }),
    );
    expect(await waitFor(async () => ep.hitsOf("/raced").length === 1, 20_000)).toBe(true);
    const oldExecution = (await cell(key, tableId, rowId)).executionId;
    // A new run replaces the cell while its answer is on the way: the old attempt is stale.
    const second = startedRun(
      await apiClient(key).POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all" },
      }),
    );
    open();
    expect(await waitForDispatch(key, tableId, second.dispatchId)).toBe("completed");
    await waitForDispatch(key, tableId, first.dispatchId);
    const now = await cell(key, tableId, rowId);
    expect(now.executionId).not.toBe(oldExecution);
    expect(now).toMatchObject({ status: "completed", outcome: "ok" });
    // The first answer was recorded by no winning write, so nobody paid for it. The new
    // run waited for it; seen while the old write was still pending it is served free,
    // seen after the old reservation was given back it is asked again and paid for.
    const after = await usage(key);
    const hits = ep.hitsOf("/raced").length;
    if (hits === 1) {
      expect(now.details).toMatchObject({ cached: true });
      expect(costOf(now)).toBe(0);
    } else {
      expect(hits).toBe(2);
      expect(now.details).not.toMatchObject({ cached: true });
      expect(costOf(now)).toBe(COST);
    }
    // Either way: charged exactly what the winning cell says, nothing left reserved.
    expect(after.used).toBe(before.used + costOf(now));
    expect(after.reserved).toBe(0);
  });
});

describe("paid blocks of a workflow", () => {
  /** Two company_lookup blocks (on two domains), the second followed by `then`. */
  function twoLookups(then?: Schemas["WorkflowDefinition"]["blocks"][number]) {
    return {
      inputs: [{ name: "d", type: "text" as const, required: true }],
      blocks: [
        {
          id: "a",
          type: "enrichment" as const,
          enrichmentId: "company_lookup",
          inputs: { domain: "'a-' & inputs.d" },
          next: "b",
        },
        {
          id: "b",
          type: "enrichment" as const,
          enrichmentId: "company_lookup",
          inputs: { domain: "'b-' & inputs.d" },
          ...(then ? { next: then.id } : {}),
        },
        ...(then ? [then] : []),
      ],
    };
  }

  it("two paid blocks of one execution each charge, once", async () => {
    const key = await workspace("/blocks");
    ep.on("/blocks", async (hit) => found(hit.query.get("domain") ?? ""));
    const { tableId } = await workflowTable(key, {
      workflow: twoLookups(),
      outputs: { out: "b.name" },
      columns: [{ id: "d", name: "d", type: "text" }],
      group: { inputs: { d: "d" } },
      rows: [{ d: "two.example" }],
    });
    expect(await runToEnd(key, tableId)).toBe("completed");
    const u = await usage(key);
    expect(u.bySource).toEqual([
      { source: "company_lookup@a", credits: COST },
      { source: "company_lookup@b", credits: COST },
    ]);
    expect(u.reserved).toBe(0);
  });

  it("a block's answer is charged with its checkpoint, even when a later block fails the cell", async () => {
    const key = await workspace("/then-fail");
    ep.on("/then-fail", async (hit) => found(hit.query.get("domain") ?? ""));
    const { tableId } = await workflowTable(key, {
      workflow: twoLookups({ id: "boom", type: "fail", message: "no" }),
      outputs: { out: "b.name" },
      columns: [{ id: "d", name: "d", type: "text" }],
      group: { inputs: { d: "d" } },
      rows: [{ d: "fails.example" }],
    });
    await runToEnd(key, tableId);
    expect(await cellCounts(tableId)).toEqual({ error: 1 });
    const u = await usage(key);
    // Both answers were recorded (their blocks' checkpoints) before the cell failed.
    expect(u.used).toBe(2 * COST);
    expect(u.reserved).toBe(0);
  });
});

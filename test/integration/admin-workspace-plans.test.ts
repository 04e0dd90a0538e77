/**
 * Plans for hosted use (API.md "Money (credits)"): the admin creates a workspace on a plan
 * and moves it to another, and the move holds for the workspace's next admission: a
 * workspace whose free month is used up gets its paid cells refused, and once moved to
 * `unlimited` a new run's paid cells are admitted and charged. The refusals (no token, a
 * wrong one, a bad plan) are in api-bad-input.test.ts.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLANS } from "@/domain/statuses";
import { planLimits } from "@/limits/plans";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { cellCounts, useWorker, waitForDispatch } from "../helpers/engine";
import { waitFor } from "../helpers/processes";
import { metaTable } from "../helpers/tables";

const ADMIN_TOKEN = "plans-admin-token";
const admin = () => apiClient(ADMIN_TOKEN);
const db = () => getDatabase().db;
let ep: Endpoint;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 10);
  ep = await startEndpoint();
  ep.on("/page", async () => ({
    status: 200,
    body: "<html><head><title>Hello</title></head></html>",
    headers: { "content-type": "text/html" },
  }));
  process.env.CELLFLOW_ADMIN_TOKEN = ADMIN_TOKEN;
});
afterAll(async () => {
  delete process.env.CELLFLOW_ADMIN_TOKEN;
  await ep.close();
});

async function createWorkspace(
  name: string,
  plan?: (typeof PLANS)[number],
): Promise<{ id: string; name: string; apiKey: string; plan: string }> {
  const res = await admin().POST("/api/admin/workspaces", {
    body: plan ? { name, plan } : { name },
  });
  expect(res.response.status).toBe(201);
  return dataOf(res);
}

async function usagePlan(apiKey: string): Promise<string> {
  return dataOf(await apiClient(apiKey).GET("/api/usage")).plan;
}

describe("the plan a workspace is created on", () => {
  it("POST /api/admin/workspaces answers the plan asked for, and the workspace is on it", async () => {
    for (const plan of PLANS) {
      const ws = await createWorkspace(`on ${plan}`, plan);
      expect(ws).toMatchObject({ name: `on ${plan}`, plan });
      expect(await usagePlan(ws.apiKey)).toBe(plan);
    }
  });

  it("without a plan the workspace is on free, as before plans could be chosen", async () => {
    const ws = await createWorkspace("no plan given");
    expect(ws.plan).toBe("free");
    expect(await usagePlan(ws.apiKey)).toBe("free");
    const usage = dataOf(await apiClient(ws.apiKey).GET("/api/usage"));
    expect(usage.limit).toBe(planLimits("free").monthlyCredits);
  });
});

describe("PATCH /api/admin/workspaces/:id", () => {
  it("moves the workspace to the plan and answers { id, name, plan }", async () => {
    const ws = await createWorkspace("moving", "free");
    for (const plan of ["pro", "unlimited", "free"] as const) {
      const res = await admin().PATCH("/api/admin/workspaces/{id}", {
        params: { path: { id: ws.id } },
        body: { plan },
      });
      expect(res.response.status).toBe(200);
      expect(dataOf(res)).toStrictEqual({ id: ws.id, name: "moving", plan });
      expect(await usagePlan(ws.apiKey)).toBe(plan);
    }
  });

  it("an unknown workspace is a 404 and no workspace changes", async () => {
    const ws = await createWorkspace("bystander", "pro");
    const res = await admin().PATCH("/api/admin/workspaces/{id}", {
      params: { path: { id: "ws_doesnotexist" } },
      body: { plan: "unlimited" },
    });
    expect(res.response.status).toBe(404);
    expect(res.error?.error.code).toBe("not_found");
    expect(await usagePlan(ws.apiKey)).toBe("pro");
  });

  it("a workspace API key is not the admin token: 401, and the plan stays", async () => {
    const ws = await createWorkspace("self-upgrade", "free");
    const res = await apiClient(ws.apiKey).PATCH("/api/admin/workspaces/{id}", {
      params: { path: { id: ws.id } },
      body: { plan: "unlimited" },
    });
    expect(res.response.status).toBe(401);
    expect(await usagePlan(ws.apiKey)).toBe("free");
  });
});

describe("a plan change takes effect at the next admission", () => {
  it("a free workspace with its month used up is refused paid calls; moved to unlimited, a new run's paid cells are admitted and charged", async () => {
    const ws = await createWorkspace("upgrading", "free");
    const cap = planLimits("free").monthlyCredits ?? 0;
    await db().execute(
      sql`update workspaces set used_milli = ${cap * 1000},
                 credits_month = date_trunc('month', now() at time zone 'utc')::date
           where id = ${ws.id}`,
    );
    const tableId = await metaTable(ws.apiKey, {
      siteUrl: ep.url,
      path: "/page",
      rows: 6,
      group: { autoRun: false },
    });
    const api = apiClient(ws.apiKey);
    const refused = startedRun(
      await api.POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all" },
      }),
    );
    expect(await waitForDispatch(ws.apiKey, tableId, refused.dispatchId)).toBe("halted");
    expect((await cellCounts(tableId)).completed ?? 0).toBe(0);
    expect(ep.hitsOf("/page")).toHaveLength(0);

    const moved = await admin().PATCH("/api/admin/workspaces/{id}", {
      params: { path: { id: ws.id } },
      body: { plan: "unlimited" },
    });
    expect(dataOf(moved).plan).toBe("unlimited");

    const admitted = startedRun(
      await api.POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all" },
      }),
    );
    expect(await waitForDispatch(ws.apiKey, tableId, admitted.dispatchId)).toBe("completed");
    expect(await waitFor(async () => (await cellCounts(tableId)).completed === 6, 20_000)).toBe(
      true,
    );
    expect(ep.hitsOf("/page")).toHaveLength(6);
    const [ledger] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from usage where state = 'charged' and workspace_id = ${ws.id}`,
    );
    expect(ledger?.n).toBe(6);
    const usage = dataOf(await api.GET("/api/usage"));
    expect(usage).toMatchObject({ plan: "unlimited", limit: null, remaining: null });
    expect(usage.used).toBe(cap + 6);
  }, 60_000);
});

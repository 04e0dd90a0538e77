/**
 * Run conditions (`runIf`) through the HTTP API with a worker and a loopback provider: a
 * group's condition is judged with the row's values when its cell is claimed; not met,
 * the cell ends `completed` / `condition_not_met` with its outputs blank, the provider is
 * not called and nothing is reserved or charged; met, it runs as before. An edit that
 * makes it hold re-arms an auto-run cell. A schema whose condition reads the group's own
 * output, an unknown column or a group's cell is refused (400) at `groups.<i>.runIf.<j>`.
 * Row and run `where` take `{ group, outcome }`; the dry run counts `skippedByCondition`.
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

/** company_lookup's price (src/enrichments/company-lookup.ts). */
const COST = 5;
const PATH = "/lookup";
const db = () => getDatabase().db;

let ep: Endpoint;
let key: string;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 4);
  ep = await startEndpoint();
  ep.on(PATH, async (hit) => ({
    status: 200,
    body: { name: `Company of ${hit.query.get("domain")}` },
  }));
  key = (await newWorkspace()).key;
  const r = await apiClient(key).PUT("/api/secrets/{name}", {
    params: { path: { name: "COMPANY_LOOKUP_URL_1" } },
    body: { value: `${ep.url}${PATH}` },
  });
  expect(r.response.status).toBe(200);
});

afterAll(async () => {
  await ep.close();
});

const COLUMNS: Schemas["Column"][] = [
  { id: "domain", name: "Domain", type: "text" },
  { id: "tier", name: "Tier", type: "text" },
  { id: "company", name: "Company", type: "text" },
];

/** The paid lookup on `domain` into `company`, only for rows whose tier is "pro". */
function lookupGroup(extra: Partial<Schemas["EnrichmentGroup"]> = {}): Schemas["EnrichmentGroup"] {
  return {
    id: "g",
    name: "Lookup",
    kind: "enrichment",
    enrichmentId: "company_lookup",
    inputs: { domain: "domain" },
    outputs: [{ columnId: "company", from: "name" }],
    runIf: [{ column: "tier", op: "eq", value: "pro" }],
    ...extra,
  };
}

async function table(
  rows: Record<string, unknown>[],
  group: Schemas["Group"] = lookupGroup(),
): Promise<{ tableId: string; rowIds: string[] }> {
  const t = await apiClient(key).POST("/api/tables", {
    body: { name: "conditions", columns: COLUMNS, groups: [group] },
  });
  const tableId = dataOf(t).id;
  const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: { rows: rows.map((data) => ({ data })) },
  });
  return { tableId, rowIds: dataOf(ins).rows.map((r) => r.id) };
}

const row = async (tableId: string, rowId: string) =>
  dataOf(
    await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: tableId, rowId } },
    }),
  );

const lookups = (domain: string) =>
  ep.hitsOf(PATH).filter((h) => h.query.get("domain") === domain).length;

async function run(tableId: string, body: Schemas["CreateRunRequest"]): Promise<string> {
  const started = startedRun(
    await apiClient(key).POST("/api/tables/{id}/runs", { params: { path: { id: tableId } }, body }),
  );
  expect(await waitForDispatch(key, tableId, started.dispatchId)).toBe("completed");
  return started.dispatchId;
}

/** Usage rows (reserved, charged or released) of the table's cells, by row. */
async function usageRows(tableId: string): Promise<{ rowId: string; state: string }[]> {
  return queryRows(
    db(),
    sql`select row_id as "rowId", state::text as state from usage where table_id = ${tableId}`,
  );
}

describe("a group's run condition", () => {
  it("not met: the cell ends condition_not_met, its output blank, no call, nothing reserved or charged", async () => {
    const { tableId, rowIds } = await table([
      { domain: "pro-1.example", tier: "pro" },
      { domain: "free-1.example", tier: "free", company: "stale answer" },
      { domain: "none-1.example" },
    ]);
    const [pro, free, none] = rowIds as [string, string, string];
    const dispatchId = await run(tableId, { mode: "all" });

    const proRow = await row(tableId, pro);
    expect(proRow.cells.g).toMatchObject({ status: "completed", outcome: "ok" });
    expect(proRow.data.company).toBe("Company of pro-1.example");
    for (const id of [free, none]) {
      const r = await row(tableId, id);
      expect(r.cells.g).toMatchObject({ status: "completed", outcome: "condition_not_met" });
      expect(r.data.company, "the output is cleared").toBeUndefined();
    }
    expect(lookups("pro-1.example")).toBe(1);
    expect(lookups("free-1.example") + lookups("none-1.example")).toBe(0);
    // One usage row, the met row's, charged; none for the others (not even a released one).
    expect(await usageRows(tableId)).toEqual([{ rowId: pro, state: "charged" }]);
    const view = dataOf(
      await apiClient(key).GET("/api/tables/{id}/runs/{dispatchId}", {
        params: { path: { id: tableId, dispatchId } },
      }),
    );
    expect(view.creditsUsed).toBe(COST);
    expect(view.counts.completed).toBe(3);
    // A cell event like any terminal, with the cleared output.
    const events = await queryRows<{ data: Record<string, unknown> }>(
      db(),
      sql`select data from events where table_id = ${tableId} and kind = 'cell'
             and data->>'rowId' = ${free} and data->>'outcome' = 'condition_not_met'`,
    );
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({ status: "completed", outputs: { company: null } });
  });

  it("met on a workflow group too, and judged on every claim: a run after the row changed runs it", async () => {
    const wf = dataOf(
      await apiClient(key).POST("/api/workflows", {
        body: {
          name: "w",
          definition: { blocks: [{ id: "out", type: "transform", expression: "'ran'" }] },
        },
      }),
    ).id;
    const { tableId, rowIds } = await table([{ tier: "free" }], {
      id: "w",
      name: "W",
      kind: "workflow",
      workflowId: wf,
      outputs: [{ columnId: "company", from: "out" }],
      runIf: [{ column: "tier", op: "eq", value: "pro" }],
    });
    const rowId = rowIds[0] as string;
    await run(tableId, { mode: "all" });
    expect((await row(tableId, rowId)).cells.w?.outcome).toBe("condition_not_met");
    await apiClient(key).PATCH("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: tableId, rowId } },
      body: { data: { tier: "pro" } },
    });
    await run(tableId, { mode: "all" });
    const after = await row(tableId, rowId);
    expect(after.cells.w).toMatchObject({ status: "completed", outcome: "ok" });
    expect(after.data.company).toBe("ran");
  });

  it("an edit that makes it hold re-arms the auto-run cell, which then runs and is charged", async () => {
    const { tableId, rowIds } = await table(
      [{ domain: "rearm.example", tier: "free" }],
      lookupGroup({ autoRun: true, dependsOn: ["domain"] }),
    );
    const rowId = rowIds[0] as string;
    const first = await waitFor(
      async () => (await row(tableId, rowId)).cells.g?.outcome === "condition_not_met",
      30_000,
    );
    expect(first).toBe(true);
    expect(lookups("rearm.example")).toBe(0);
    const edit = await apiClient(key).PATCH("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: tableId, rowId } },
      body: { data: { tier: "pro" } },
    });
    expect(edit.response.status).toBe(200);
    const ran = await waitFor(
      async () => (await row(tableId, rowId)).cells.g?.outcome === "ok",
      30_000,
    );
    expect(ran).toBe(true);
    expect((await row(tableId, rowId)).data.company).toBe("Company of rearm.example");
    expect(lookups("rearm.example")).toBe(1);
    expect(await usageRows(tableId)).toEqual([{ rowId, state: "charged" }]);
  });

  it("an edit of a column the condition does not read re-arms nothing", async () => {
    const { tableId, rowIds } = await table(
      [{ domain: "other.example", tier: "free" }],
      lookupGroup({ autoRun: true, dependsOn: ["domain"] }),
    );
    const rowId = rowIds[0] as string;
    await waitFor(
      async () => (await row(tableId, rowId)).cells.g?.outcome === "condition_not_met",
      30_000,
    );
    // `company` is the group's own output: writing it by hand re-arms nothing.
    const edit = await apiClient(key).PATCH("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: tableId, rowId } },
      body: { data: { company: "typed" } },
    });
    expect(edit.response.status).toBe(200);
    const after = await row(tableId, rowId);
    expect(after.cells.g?.outcome).toBe("condition_not_met");
    expect(after.data.company).toBe("typed");
    const runs = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from dispatches where table_id = ${tableId}`,
    );
    expect(runs[0]?.n, "only the insert's auto-run").toBe(1);
  });
});

describe("the schema refuses a condition it cannot judge", () => {
  const refused = async (runIf: unknown[]) => {
    const res = await apiClient(key).POST("/api/tables", {
      body: {
        name: "bad",
        columns: COLUMNS,
        groups: [lookupGroup({ runIf: runIf as Schemas["ColumnCondition"][] })],
      },
    });
    expect(res.response.status).toBe(400);
    return (res.error as { error: { issues: { path: string; message: string }[] } }).error.issues;
  };

  it("on the group's own output, an unknown column, a group's cell, a wrong operator or value: 400 at groups.<i>.runIf.<j>", async () => {
    const own = await refused([
      { column: "tier", op: "not_empty" },
      { column: "company", op: "empty" },
    ]);
    expect(own).toEqual([
      { path: "groups.0.runIf.1", message: expect.stringContaining("own output column") },
    ]);
    expect((await refused([{ column: "nope", op: "empty" }]))[0]?.path).toBe(
      "groups.0.runIf.0.column",
    );
    expect((await refused([{ column: "tier", op: "gt", value: 1 }]))[0]?.path).toBe(
      "groups.0.runIf.0.op",
    );
    expect((await refused([{ column: "tier", op: "eq" }]))[0]?.path).toBe("groups.0.runIf.0.value");
    const group = await refused([{ group: "g", status: "error" }]);
    expect(group.length).toBeGreaterThan(0);
    for (const issue of group) expect(issue.path).toMatch(/^groups\.0\.runIf\.0(\.|$)/);
  });

  it("a condition on another group's output orders the groups; one that closes a loop is a cycle", async () => {
    const wf = dataOf(
      await apiClient(key).POST("/api/workflows", {
        body: {
          name: "w",
          definition: { blocks: [{ id: "out", type: "transform", expression: "'pro'" }] },
        },
      }),
    ).id;
    const tierGroup: Schemas["WorkflowGroup"] = {
      id: "t",
      name: "T",
      kind: "workflow",
      workflowId: wf,
      outputs: [{ columnId: "tier", from: "out" }],
      runIf: [{ column: "company", op: "empty" }],
    };
    const res = await apiClient(key).POST("/api/tables", {
      body: { name: "loop", columns: COLUMNS, groups: [lookupGroup(), tierGroup] },
    });
    expect(res.response.status).toBe(400);
    expect(
      (res.error as { error: { issues: { path: string; message: string }[] } }).error.issues,
    ).toEqual([{ path: "groups", message: expect.stringContaining("dependency cycle") }]);
  });
});

describe("where { group, outcome } and the dry run", () => {
  it("rows, runs and the dry run see the cells that ended condition_not_met", async () => {
    const { tableId, rowIds } = await table([
      { domain: "w-pro.example", tier: "pro" },
      { domain: "w-free.example", tier: "free" },
      { domain: "w-free2.example", tier: "free" },
      { domain: "w-pro2.example", tier: "pro" },
    ]);
    const path = { params: { path: { id: tableId } } };

    // Before any run: the dry run counts the two rows whose condition does not hold, free.
    const dry = dataOf(
      await apiClient(key).POST("/api/tables/{id}/runs", {
        ...path,
        body: { mode: "all", dryRun: true },
      }),
    ) as Schemas["RunEstimate"];
    expect(dry).toMatchObject({ rows: 4, cells: 4, skippedByCondition: 2 });
    expect(dry.estimatedCredits).toBe(2 * COST);
    expect(dry.groups).toEqual([
      { groupId: "g", cells: 4, credits: 2 * COST, cached: 0, skippedByCondition: 2 },
    ]);

    await run(tableId, { mode: "all" });
    const notMet: Schemas["WhereCondition"][] = [{ group: "g", outcome: "condition_not_met" }];
    const page = dataOf(
      await apiClient(key).GET("/api/tables/{id}/rows", {
        params: { path: { id: tableId }, query: { where: notMet } },
      }),
    );
    expect(page.rows.map((r) => r.id)).toEqual([rowIds[1], rowIds[2]]);
    const ok = dataOf(
      await apiClient(key).GET("/api/tables/{id}/rows", {
        params: { path: { id: tableId }, query: { where: [{ group: "g", outcome: "ok" }] } },
      }),
    );
    expect(ok.rows.map((r) => r.id)).toEqual([rowIds[0], rowIds[3]]);

    // A run's where: only the not-met rows, which the dry run says cost nothing.
    const dryNotMet = dataOf(
      await apiClient(key).POST("/api/tables/{id}/runs", {
        ...path,
        body: { mode: "all", where: notMet, dryRun: true },
      }),
    ) as Schemas["RunEstimate"];
    expect(dryNotMet).toMatchObject({
      rows: 2,
      cells: 2,
      skippedByCondition: 2,
      estimatedCredits: 0,
    });
    const before = ep.hitsOf(PATH).length;
    await run(tableId, { mode: "all", where: notMet });
    expect(ep.hitsOf(PATH).length).toBe(before);

    // The Stop takes it too (nothing in flight to cancel here), and an unknown outcome is a 400.
    const stop = await apiClient(key).POST("/api/tables/{id}/runs/cancel", {
      ...path,
      body: { where: notMet },
    });
    expect(dataOf(stop).cancelled).toBe(0);
    const bad = await apiClient(key).GET("/api/tables/{id}/rows", {
      params: {
        path: { id: tableId },
        query: { where: [{ group: "g", outcome: "done" } as unknown as Schemas["WhereCondition"]] },
      },
    });
    expect(bad.response.status).toBe(400);
  });
});

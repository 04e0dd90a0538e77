/**
 * Waterfall groups through the HTTP API with a worker and loopback providers: steps are
 * tried in order and the first found, valid answer wins, so later steps are never called;
 * only steps that answered with a paid answer (found or rejected) are charged, under a
 * key naming the step, and every other reservation is given back; no winner is
 * `not_found`, every step failing is `error`; a cached answer, a Stop mid-step and a
 * workflow step that could pause cost nothing; the schema is checked (400) and the dry
 * run says its figure is an upper bound.
 */
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { cellCounts, useWorker, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";

/** company_lookup's and website_meta's prices (src/enrichments). */
const COMPANY = 5;
const META = 1;

let ep: Endpoint;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 4);
  ep = await startEndpoint();
  // company_lookup's provider: by the domain's first word.
  ep.on("/company", async (hit) => {
    const domain = hit.query.get("domain") ?? "";
    const kind = domain.split("-")[0];
    if (kind === "found") return { status: 200, body: { name: `Company of ${domain}` } };
    if (kind === "bad") return { status: 500, body: { error: "provider down" } };
    if (kind === "slow") return "hang";
    return { status: 404, body: { error: "no such company" } };
  });
});

afterAll(async () => {
  await ep.close();
});

type Step = Schemas["WaterfallGroup"]["steps"][number];

/** A workspace whose company_lookup asks the loopback provider. */
async function workspace(): Promise<string> {
  return (await workspaceOf()).key;
}

async function workspaceOf(): Promise<{ id: string; key: string }> {
  const { id, key } = await newWorkspace();
  const r = await apiClient(key).PUT("/api/secrets/{name}", {
    params: { path: { name: "COMPANY_LOOKUP_URL_1" } },
    body: { value: `${ep.url}/company` },
  });
  expect(r.response.status).toBe(200);
  return { id, key };
}

/** company_lookup on column `col`, its name as output `name`. */
const lookup = (col: string, extra: Partial<Step> = {}): Step => ({
  enrichmentId: "company_lookup",
  inputs: { domain: col },
  outputs: { name: "name" },
  ...extra,
});

/** website_meta on column `col`, its title as output `name`. */
const meta = (col: string): Step => ({
  enrichmentId: "website_meta",
  inputs: { url: col },
  outputs: { name: "title" },
});

const COLUMNS = ["d1", "d2", "d3", "company"];

function tableBody(steps: Step[]): Schemas["CreateTableRequest"] {
  return {
    name: "waterfall",
    columns: COLUMNS.map((id) => ({ id, name: id, type: "text" as const })),
    groups: [
      {
        id: "g",
        name: "Company",
        kind: "waterfall",
        steps,
        outputs: [{ columnId: "company", from: "name" }],
      },
    ],
  };
}

async function table(
  key: string,
  steps: Step[],
  rows: Record<string, string>[],
): Promise<{ tableId: string; rowIds: string[] }> {
  const t = await apiClient(key).POST("/api/tables", { body: tableBody(steps) });
  const tableId = dataOf(t).id;
  const r = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: { rows: rows.map((data) => ({ data })) },
  });
  return { tableId, rowIds: dataOf(r).rows.map((x) => x.id) };
}

async function runAll(key: string, tableId: string): Promise<string> {
  const run = startedRun(
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all" },
    }),
  );
  return run.dispatchId;
}

async function runToEnd(key: string, tableId: string): Promise<void> {
  const dispatchId = await runAll(key, tableId);
  expect(await waitForDispatch(key, tableId, dispatchId)).toBe("completed");
}

const usage = async (key: string) => dataOf(await apiClient(key).GET("/api/usage"));

async function cell(key: string, tableId: string, rowId: string) {
  return dataOf(
    await apiClient(key).GET("/api/tables/{id}/rows/{rowId}/cells/{groupId}", {
      params: { path: { id: tableId, rowId, groupId: "g" } },
    }),
  );
}

interface StepDetail {
  step: number;
  status: string;
  costCredits: number;
  cached?: boolean;
  enrichmentId?: string;
  workflowId?: string;
}
const stepsOf = (c: { details: Record<string, unknown> }) =>
  (c.details.steps as StepDetail[]).map((s) => [s.step, s.status, s.costCredits]);

const callsFor = (domain: string) =>
  ep.hitsOf("/company").filter((h) => h.query.get("domain") === domain).length;

describe("a waterfall tries its steps in order and charges the steps that answered", () => {
  it("the first step's answer wins: later steps are not called and only step 1 is charged", async () => {
    const key = await workspace();
    const { tableId, rowIds } = await table(
      key,
      [lookup("d1"), lookup("d2"), meta("d3")],
      [{ d1: "found-w1.example", d2: "found-w1b.example", d3: `${ep.url}/site-w1` }],
    );
    const before = await usage(key);
    await runToEnd(key, tableId);
    const c = await cell(key, tableId, rowIds[0] as string);
    expect(c.outcome).toBe("ok");
    expect(c.outputs).toEqual({ company: "Company of found-w1.example" });
    expect(stepsOf(c)).toEqual([
      [1, "found", COMPANY],
      [2, "not_called", 0],
      [3, "not_called", 0],
    ]);
    expect(c.details).toMatchObject({ winner: 1, costCredits: COMPANY });
    expect(callsFor("found-w1b.example")).toBe(0);
    expect(ep.hitsOf("/site-w1")).toHaveLength(0);
    const after = await usage(key);
    expect(after.used - before.used).toBe(COMPANY);
    expect(after.reserved).toBe(0);
    expect(after.bySource).toEqual([{ source: "company_lookup@step1", credits: COMPANY }]);
  });

  it("step 1 finding nothing calls step 2, which alone is charged", async () => {
    const key = await workspace();
    const { tableId, rowIds } = await table(
      key,
      [lookup("d1"), lookup("d2")],
      [{ d1: "none-w2.example", d2: "found-w2.example" }],
    );
    await runToEnd(key, tableId);
    const c = await cell(key, tableId, rowIds[0] as string);
    expect(c.outcome).toBe("ok");
    expect(c.outputs).toEqual({ company: "Company of found-w2.example" });
    expect(stepsOf(c)).toEqual([
      [1, "empty", 0],
      [2, "found", COMPANY],
    ]);
    const u = await usage(key);
    expect(u.used).toBe(COMPANY);
    expect(u.reserved).toBe(0);
    expect(u.bySource).toEqual([{ source: "company_lookup@step2", credits: COMPANY }]);
  });

  it("a step whose answer fails its validate is charged, and the next step is called", async () => {
    const key = await workspace();
    const { tableId, rowIds } = await table(
      key,
      [lookup("d1", { validate: [{ output: "name", op: "contains", value: "Inc" }] }), meta("d2")],
      [{ d1: "found-w3.example", d2: `${ep.url}/site-w3` }],
    );
    ep.on("/site-w3", async () => ({
      status: 200,
      body: "<title>W3 Inc</title>",
      headers: { "content-type": "text/html" },
    }));
    await runToEnd(key, tableId);
    const c = await cell(key, tableId, rowIds[0] as string);
    expect(c.outcome).toBe("ok");
    expect(c.outputs).toEqual({ company: "W3 Inc" });
    expect(stepsOf(c)).toEqual([
      [1, "rejected", COMPANY],
      [2, "found", META],
    ]);
    const u = await usage(key);
    expect(u.used).toBe(COMPANY + META);
    expect(u.reserved).toBe(0);
  });

  it("a step the row's budget cannot pay is not called: the cell ends over_budget, the steps that answered before it charged", async () => {
    const key = await workspace();
    const { tableId, rowIds } = await table(
      key,
      [
        lookup("d1", { validate: [{ output: "name", op: "contains", value: "Inc" }] }),
        lookup("d2"),
        meta("d3"),
      ],
      [{ d1: "found-wb1.example", d2: "found-wb2.example", d3: `${ep.url}/site-wb` }],
    );
    // Room for step 1's call, not for step 2's on top of it.
    const run = startedRun(
      await apiClient(key).POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all", maxCreditsPerRow: COMPANY + META },
      }),
    );
    expect(await waitForDispatch(key, tableId, run.dispatchId)).toBe("completed");
    const c = await cell(key, tableId, rowIds[0] as string);
    expect(c.status).toBe("completed");
    expect(c.outcome).toBe("over_budget");
    expect(c.outputs).toEqual({ company: null });
    expect(stepsOf(c)).toEqual([
      [1, "rejected", COMPANY],
      [2, "not_called", 0],
      [3, "not_called", 0],
    ]);
    expect(c.details).toMatchObject({
      winner: null,
      costCredits: COMPANY,
      overBudget: { source: "company_lookup@step2", costCredits: COMPANY },
    });
    expect(callsFor("found-wb1.example")).toBe(1);
    expect(callsFor("found-wb2.example")).toBe(0);
    expect(ep.hitsOf("/site-wb")).toHaveLength(0);
    const u = await usage(key);
    expect(u.used).toBe(COMPANY);
    expect(u.reserved).toBe(0);
    expect(u.bySource).toEqual([{ source: "company_lookup@step1", credits: COMPANY }]);
  });

  it("a waterfall's run condition that does not hold calls no step and charges nothing", async () => {
    const key = await workspace();
    const body = tableBody([lookup("d1"), lookup("d2")]);
    const [g] = body.groups ?? [];
    if (!g) throw new Error("no group");
    g.runIf = [{ column: "d3", op: "eq", value: "go" }];
    const t = dataOf(await apiClient(key).POST("/api/tables", { body }));
    const r = await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: t.id } },
      body: {
        rows: [
          { data: { d1: "found-wc1.example", d2: "found-wc2.example", d3: "stop" } },
          { data: { d1: "found-wc3.example", d2: "found-wc4.example", d3: "go" } },
        ],
      },
    });
    const [skipped, ran] = dataOf(r).rows.map((x) => x.id) as [string, string];
    await runToEnd(key, t.id);
    const notMet = await cell(key, t.id, skipped);
    expect(notMet).toMatchObject({ status: "completed", outcome: "condition_not_met" });
    expect(notMet.outputs).toEqual({ company: null });
    expect(callsFor("found-wc1.example") + callsFor("found-wc2.example")).toBe(0);
    expect(await cell(key, t.id, ran)).toMatchObject({ outcome: "ok" });
    const u = await usage(key);
    expect(u.used).toBe(COMPANY);
    expect(u.bySource).toEqual([{ source: "company_lookup@step1", credits: COMPANY }]);
  });

  it("no step wins: not_found with blank outputs, charged only for the step that answered", async () => {
    const key = await workspace();
    const { tableId, rowIds } = await table(
      key,
      [
        lookup("d1", { validate: [{ output: "name", op: "eq", value: "nobody" }] }),
        lookup("d2"),
        lookup("d3"),
      ],
      [{ d1: "found-w4.example", d2: "none-w4.example", d3: "bad-w4.example" }],
    );
    await runToEnd(key, tableId);
    const c = await cell(key, tableId, rowIds[0] as string);
    expect(c.status).toBe("completed");
    expect(c.outcome).toBe("not_found");
    expect(c.outputs).toEqual({ company: null });
    expect(stepsOf(c)).toEqual([
      [1, "rejected", COMPANY],
      [2, "empty", 0],
      [3, "error", 0],
    ]);
    const u = await usage(key);
    expect(u.used).toBe(COMPANY);
    expect(u.reserved).toBe(0);
  });

  it("every step failing ends the cell in error with each reason, and charges nothing", async () => {
    const key = await workspace();
    const { tableId, rowIds } = await table(
      key,
      [lookup("d1"), lookup("d2")],
      [{ d1: "bad-w5a.example", d2: "bad-w5b.example" }],
    );
    await runToEnd(key, tableId);
    const c = await cell(key, tableId, rowIds[0] as string);
    expect(c.status).toBe("error");
    expect(c.error).toMatch(
      /^Every step of the waterfall failed — step 1 \(company_lookup\): .*step 2/,
    );
    expect(stepsOf(c)).toEqual([
      [1, "error", 0],
      [2, "error", 0],
    ]);
    const u = await usage(key);
    expect(u.used).toBe(0);
    expect(u.reserved).toBe(0);
  });

  it("a step answered from the result cache costs nothing and calls no provider", async () => {
    const key = await workspace();
    const { tableId, rowIds } = await table(
      key,
      [lookup("d1"), lookup("d2")],
      [{ d1: "found-w6.example", d2: "found-w6b.example" }],
    );
    await runToEnd(key, tableId);
    await runToEnd(key, tableId);
    const c = await cell(key, tableId, rowIds[0] as string);
    expect(c.outcome).toBe("ok");
    expect(stepsOf(c)).toEqual([
      [1, "found", 0],
      [2, "not_called", 0],
    ]);
    expect((c.details.steps as StepDetail[])[0]?.cached).toBe(true);
    expect(callsFor("found-w6.example")).toBe(1);
    const u = await usage(key);
    expect(u.used).toBe(COMPANY);
    expect(u.reserved).toBe(0);
  });

  it("a Stop while step 2 waits for its provider cancels the cell and charges nothing", async () => {
    const key = await workspace();
    const { tableId, rowIds } = await table(
      key,
      [lookup("d1", { validate: [{ output: "name", op: "eq", value: "nobody" }] }), lookup("d2")],
      [{ d1: "found-w7.example", d2: "slow-w7.example" }],
    );
    const dispatchId = await runAll(key, tableId);
    expect(await waitFor(async () => callsFor("slow-w7.example") === 1, 30_000)).toBe(true);
    // Step 2's call is out: its reservation (and step 1's, kept for the terminal write) held.
    expect((await usage(key)).reserved).toBe(2 * COMPANY);
    const stop = await apiClient(key).POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id: tableId } },
      body: {},
    });
    expect(dataOf(stop).cancelled).toBe(1);
    expect(await waitForDispatch(key, tableId, dispatchId)).toBe("cancelled");
    const c = await cell(key, tableId, rowIds[0] as string);
    expect(c.status).toBe("cancelled");
    expect(await waitFor(async () => (await usage(key)).reserved === 0, 10_000)).toBe(true);
    expect((await usage(key)).used).toBe(0);
  });
});

describe("workflow steps", () => {
  async function workflow(key: string, definition: Schemas["WorkflowDefinition"]) {
    return dataOf(
      await apiClient(key).POST("/api/workflows", { body: { name: "step", definition } }),
    ).id;
  }

  const lookupWorkflow: Schemas["WorkflowDefinition"] = {
    inputs: [{ name: "domain", type: "text", required: true }],
    blocks: [
      {
        id: "lookup",
        type: "enrichment",
        enrichmentId: "company_lookup",
        inputs: { domain: "inputs.domain" },
      },
    ],
  };

  it("a workflow step runs its paid blocks under keys naming the step, charged when it wins", async () => {
    const key = await workspace();
    const wf = await workflow(key, lookupWorkflow);
    const { tableId, rowIds } = await table(
      key,
      [
        lookup("d1"),
        { workflowId: wf, inputs: { domain: "d2" }, outputs: { name: "lookup.name" } },
      ],
      [{ d1: "none-w8.example", d2: "found-w8.example" }],
    );
    await runToEnd(key, tableId);
    const c = await cell(key, tableId, rowIds[0] as string);
    expect(c.outcome).toBe("ok");
    expect(c.outputs).toEqual({ company: "Company of found-w8.example" });
    expect(stepsOf(c)).toEqual([
      [1, "empty", 0],
      [2, "found", COMPANY],
    ]);
    const u = await usage(key);
    expect(u.bySource).toEqual([{ source: "company_lookup@lookup@step2", credits: COMPANY }]);
    expect(u.reserved).toBe(0);
  });

  it("a workflow with an approval or wait block is refused as a step (400), and fails the cell if it gains one later", async () => {
    const key = await workspace();
    const pausing = await workflow(key, {
      inputs: [],
      blocks: [
        { id: "ok", type: "approval", next: "out" },
        { id: "out", type: "transform", expression: "'x'" },
      ],
    });
    const refused = await apiClient(key).POST("/api/tables", {
      body: tableBody([
        lookup("d1"),
        { workflowId: pausing, inputs: {}, outputs: { name: "out" } },
      ]),
    });
    expect(refused.response.status).toBe(400);
    expect(JSON.stringify(refused.error)).toContain("groups.0.steps.1.workflowId");

    const plain = await workflow(key, {
      inputs: [],
      blocks: [{ id: "out", type: "transform", expression: "'x'" }],
    });
    const { tableId, rowIds } = await table(
      key,
      [lookup("d1"), { workflowId: plain, inputs: {}, outputs: { name: "out" } }],
      [{ d1: "found-w9.example" }],
    );
    const edited = await apiClient(key).PUT("/api/workflows/{id}", {
      params: { path: { id: plain } },
      body: {
        name: "step",
        definition: {
          inputs: [],
          blocks: [
            { id: "pause", type: "wait", ms: 1, next: "out" },
            { id: "out", type: "transform", expression: "'x'" },
          ],
        },
      },
    });
    expect(edited.response.status).toBe(200);
    await runToEnd(key, tableId);
    const c = await cell(key, tableId, rowIds[0] as string);
    expect(c.status).toBe("error");
    expect(c.error).toContain("a waterfall step cannot pause");
    // Nothing was called: the check comes before the first step.
    expect(callsFor("found-w9.example")).toBe(0);
    expect((await usage(key)).used).toBe(0);
  });
});

describe("auto-run", () => {
  it("while the month's credits are used up, a waterfall does not fire by itself", async () => {
    const { id, key } = await workspaceOf();
    await getDatabase().db.execute(
      sql`update workspaces set plan = 'free', used_milli = 1000 * 1000,
                 credits_month = date_trunc('month', now() at time zone 'utc')::date
           where id = ${id}`,
    );
    const body = tableBody([lookup("d1")]);
    const g = body.groups?.[0];
    if (g) Object.assign(g, { autoRun: true, dependsOn: ["d1"] });
    const tableId = dataOf(await apiClient(key).POST("/api/tables", { body })).id;
    const insert = (d1: string) =>
      apiClient(key).POST("/api/tables/{id}/rows", {
        params: { path: { id: tableId } },
        body: { rows: [{ data: { d1 } }] },
      });
    await insert("found-spent.example");
    expect(await cellCounts(tableId)).toEqual({});
    // Credits back (a new month): the next insert fires it.
    await getDatabase().db.execute(sql`update workspaces set used_milli = 0 where id = ${id}`);
    await insert("found-back.example");
    const counts = await cellCounts(tableId);
    expect(Object.values(counts).reduce((n, c) => n + c, 0)).toBe(1);
  });
});

describe("the schema and the dry run", () => {
  it("refuses unknown enrichments and columns, output names no step produces and empty steps (400)", async () => {
    const key = await workspace();
    const bad = async (steps: Step[], from = "name") => {
      const body = tableBody(steps);
      const g = body.groups?.[0];
      if (g?.kind === "waterfall") g.outputs = [{ columnId: "company", from }];
      const r = await apiClient(key).POST("/api/tables", { body });
      expect(r.response.status).toBe(400);
      return (r.error?.error.issues ?? []).map((i) => i.path);
    };
    expect(await bad([{ ...lookup("d1"), enrichmentId: "nope" }])).toEqual([
      "groups.0.steps.0.enrichmentId",
    ]);
    expect(await bad([lookup("missing")])).toEqual(["groups.0.steps.0.inputs.domain"]);
    expect(await bad([lookup("d1")], "other")).toEqual(["groups.0.outputs.0.from"]);
    expect(await bad([])).toEqual(["groups.0.steps", "groups.0.outputs.0.from"]);
    expect(await bad([lookup("d1", { validate: [{ output: "size", op: "not_empty" }] })])).toEqual([
      "groups.0.steps.0.validate.0.output",
    ]);
  });

  it("a waterfall reading its own output column is refused like any group", async () => {
    const key = await workspace();
    const r = await apiClient(key).POST("/api/tables", { body: tableBody([lookup("company")]) });
    expect(r.response.status).toBe(400);
  });

  it("the dry run counts every paid step and says it is an upper bound", async () => {
    const key = await workspace();
    const { tableId } = await table(
      key,
      [lookup("d1"), meta("d2")],
      [{ d1: "a.example" }, { d1: "b.example" }],
    );
    const r = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", dryRun: true },
    });
    const e = dataOf(r) as Schemas["RunEstimate"];
    expect(e.estimatedCredits).toBe(2 * (COMPANY + META));
    expect(e.groups).toEqual([
      {
        groupId: "g",
        cells: 2,
        credits: 2 * (COMPANY + META),
        cached: 0,
        skippedByCondition: 0,
        upperBound: true,
      },
    ]);
    expect(e.upperBound.map((u) => u.groupId)).toEqual(["g"]);
  });
});

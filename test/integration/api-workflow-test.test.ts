/**
 * `POST /api/workflows/:id/test` through the API: a run of a workflow (saved, a deployed
 * version, or unsaved) on inputs or on a row that answers what each block did and writes
 * no cell; its effects happen, a paid block runs only with `allowPaid` and is charged
 * under the month's cap, a pause ends it, its time cap and a client that leaves stop it and
 * give back what calls cut off mid-flight reserved (a client that leaves is still charged the
 * paid answers that finished blocks got), and no secret's value is in its answer.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { planLimits } from "@/limits/plans";
import { apiClient, dataOf, resolveRoute } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { classifyDefinition, newWorkspace } from "../helpers/fixtures";
import { startLlmServer } from "../helpers/llm-server";
import { workflowTable } from "../helpers/tables";

type Definition = Schemas["WorkflowDefinition"];
type TestBody = Schemas["TestWorkflowRequest"];

/** company_lookup's price (src/enrichments/company-lookup.ts). */
const COST = 5;
const SECRET = "s3cr3t-value-that-must-not-leak";

let ep: Endpoint;
let key: string;

beforeAll(async () => {
  await useTestDatabase();
  ep = await startEndpoint();
  key = (await newWorkspace()).key;
});

afterAll(async () => {
  await ep.close();
});

async function workflow(k: string, definition: Definition): Promise<string> {
  return dataOf(await apiClient(k).POST("/api/workflows", { body: { name: "W", definition } })).id;
}

const test = (k: string, id: string, body: TestBody) =>
  apiClient(k).POST("/api/workflows/{id}/test", { params: { path: { id } }, body });

async function ran(
  k: string,
  id: string,
  body: TestBody,
): Promise<Schemas["TestWorkflowResponse"]> {
  const r = await test(k, id, body);
  expect(r.response.status, JSON.stringify(r.error)).toBe(200);
  return dataOf(r);
}

async function refused(
  k: string,
  id: string,
  body: TestBody,
): Promise<{ status: number; error: Schemas["ApiError"]["error"] }> {
  const r = await test(k, id, body);
  return { status: r.response.status, error: (r.error as Schemas["ApiError"]).error };
}

const usage = async (k: string) => dataOf(await apiClient(k).GET("/api/usage"));

/** A workspace whose company_lookup asks `ep` at `path`. */
async function lookupWorkspace(path: string): Promise<{ id: string; key: string }> {
  const ws = await newWorkspace();
  const r = await apiClient(ws.key).PUT("/api/secrets/{name}", {
    params: { path: { name: "COMPANY_LOOKUP_URL_1" } },
    body: { value: `${ep.url}${path}` },
  });
  expect(r.response.status).toBe(200);
  return ws;
}

const lookupDefinition: Definition = {
  inputs: [{ name: "domain", type: "text", required: true }],
  blocks: [
    {
      id: "look",
      type: "enrichment",
      enrichmentId: "company_lookup",
      inputs: { domain: "inputs.domain" },
      next: "name",
    },
    { id: "name", type: "transform", expression: "blocks.look.name" },
  ],
};

/** Everything a run on a table could have written for it. */
async function tableTrace(tableId: string): Promise<string> {
  const [row] = await queryRows<{ trace: string }>(
    getDatabase().db,
    sql`select concat_ws('|',
          (select count(*) from cells where table_id = ${tableId}),
          (select count(*) from executions where table_id = ${tableId}),
          (select count(*) from cell_attempts where table_id = ${tableId}),
          (select string_agg(data::text, ',' order by id) from rows where table_id = ${tableId}),
          (select count(*) from events where table_id = ${tableId})) as trace`,
  );
  return row?.trace ?? "";
}

describe("a test run answers what each block did", () => {
  it("on inputs: the outputs of the block that ended it, every block that ran in start order", async () => {
    const id = await workflow(key, classifyDefinition);
    const body = await ran(key, id, { inputs: { n: 7 } });
    expect(body.status).toBe("completed");
    expect(body.outputs).toBe("big");
    expect(body.error).toBeNull();
    expect(body.costCredits).toBe(0);
    expect(body.blocks.map((b) => [b.id, b.status, b.output, b.error])).toEqual([
      ["double", "completed", 14, null],
      ["check", "completed", true, null],
      ["big", "completed", "big", null],
      ["result", "completed", "big", null],
    ]);
    for (const b of body.blocks) expect(b.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("a required input left empty: an error that says which, and no block runs", async () => {
    const id = await workflow(key, classifyDefinition);
    const body = await ran(key, id, {});
    expect([body.status, body.blocks]).toEqual(["error", []]);
    expect(body.error).toMatch(/required inputs are empty: n/);
  });

  it("on a row through the group: its inputs mapped from the row, `row` by column names, outputs by column id, and no cell written", async () => {
    const def: Definition = {
      inputs: [{ name: "n", type: "number", required: true }],
      blocks: [
        {
          id: "say",
          type: "transform",
          expression: "{ 'n': inputs.n, 'label': row.Label, 'twice': inputs.n * 2 }",
        },
      ],
    };
    const { tableId, workflowId, rowIds } = await workflowTable(key, {
      workflow: def,
      columns: [
        { id: "num", name: "Number", type: "number" },
        { id: "lbl", name: "Label", type: "text" },
      ],
      outputs: { twice: "say.twice" },
      group: { inputs: { n: "num" } },
      rows: [{ num: 21, lbl: "answer" }],
    });
    const rowId = rowIds[0] ?? "";
    const before = await tableTrace(tableId);
    const body = await ran(key, workflowId, { tableId, rowId, groupId: "g" });
    expect(body.status).toBe("completed");
    expect(body.outputs).toEqual({ twice: 42 });
    expect(body.blocks[0]?.output).toEqual({ n: 21, label: "answer", twice: 42 });
    // `inputs` given too override the mapped ones.
    const over = await ran(key, workflowId, { tableId, rowId, groupId: "g", inputs: { n: 1 } });
    expect(over.outputs).toEqual({ twice: 2 });
    // Without a group: the row is there by column names, inputs only from the body.
    const bare = await ran(key, workflowId, { tableId, rowId, inputs: { n: 5 } });
    expect(bare.outputs).toEqual({ n: 5, label: "answer", twice: 10 });
    expect(await tableTrace(tableId)).toBe(before);
  });

  it("an unsaved definition runs instead of the saved one; a deployed version by number; the group's version without one", async () => {
    const v = (word: string): Definition => ({
      blocks: [{ id: "w", type: "transform", expression: `'${word}'` }],
    });
    const { tableId, workflowId, rowIds } = await workflowTable(key, {
      workflow: v("one"),
      outputs: { out: "w" },
      group: { version: "deployed" },
    });
    const rowId = rowIds[0] ?? "";
    const c = apiClient(key);
    await c.POST("/api/workflows/{id}/deploy", { params: { path: { id: workflowId } } });
    await c.PUT("/api/workflows/{id}", {
      params: { path: { id: workflowId } },
      body: { definition: v("two") },
    });
    expect((await ran(key, workflowId, {})).outputs).toBe("two");
    expect((await ran(key, workflowId, { version: "live" })).outputs).toBe("two");
    expect((await ran(key, workflowId, { version: 1 })).outputs).toBe("one");
    expect((await ran(key, workflowId, { definition: v("draft") })).outputs).toBe("draft");
    // The group runs the deployed version: so does its test, unless a version is given.
    expect((await ran(key, workflowId, { tableId, rowId, groupId: "g" })).outputs).toEqual({
      out: "one",
    });
    expect(
      (await ran(key, workflowId, { tableId, rowId, groupId: "g", version: "live" })).outputs,
    ).toEqual({ out: "two" });
    const missing = await refused(key, workflowId, { version: 2 });
    expect([missing.status, missing.error.code]).toEqual([404, "not_found"]);
  });

  it("a failing block: status error with its message; a block after it never starts", async () => {
    const id = await workflow(key, {
      blocks: [
        { id: "a", type: "transform", expression: "1", next: "boom" },
        { id: "boom", type: "fail", message: "no good: {{ blocks.a }}", next: "after" },
        { id: "after", type: "transform", expression: "2" },
      ],
    });
    const body = await ran(key, id, {});
    expect(body.status).toBe("error");
    expect(body.error).toMatch(/no good: 1/);
    expect(body.blocks.map((b) => [b.id, b.status])).toEqual([
      ["a", "completed"],
      ["boom", "error"],
    ]);
    expect(body.blocks[1]?.error).toMatch(/no good: 1/);
  });

  it("a pause ends the test: status paused with the blocks so far", async () => {
    const id = await workflow(key, {
      blocks: [
        { id: "before", type: "transform", expression: "'ready'", next: "ask" },
        { id: "ask", type: "approval", prompt: "ok?", next: "after" },
        { id: "after", type: "transform", expression: "'done'" },
      ],
    });
    const body = await ran(key, id, {});
    expect(body.status).toBe("paused");
    expect(body.error).toBeNull();
    expect(body.blocks.map((b) => [b.id, b.status, b.output])).toEqual([
      ["before", "completed", "ready"],
      ["ask", "paused", null],
    ]);
  });

  it("past its time cap the run is stopped: status error with the timeout, the running block cancelled", async () => {
    const id = await workflow(key, {
      blocks: [
        { id: "quick", type: "transform", expression: "1", next: "slow" },
        { id: "slow", type: "wait", ms: 20_000 },
      ],
    });
    vi.stubEnv("CELLFLOW_TEST_RUN_TIMEOUT_MS", "300");
    try {
      const t0 = Date.now();
      const body = await ran(key, id, {});
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(body.status).toBe("error");
      expect(body.error).toMatch(/took longer than 300 ms/);
      expect(body.blocks.map((b) => [b.id, b.status])).toEqual([
        ["quick", "completed"],
        ["slow", "cancelled"],
      ]);
      expect(body.blocks[1]?.error).toMatch(/took longer than 300 ms/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("effects happen, and no secret's value is in the answer (outputs, block outputs, errors)", async () => {
    const ws = await newWorkspace();
    await apiClient(ws.key).PUT("/api/secrets/{name}", {
      params: { path: { name: "TOKEN" } },
      body: { value: SECRET },
    });
    ep.on("/echo", async (hit) => ({ status: 200, body: { heard: hit.headers["x-token"] } }));
    const id = await workflow(ws.key, {
      blocks: [
        {
          id: "call",
          type: "http",
          method: "GET",
          url: `${ep.url}/echo`,
          headers: { "x-token": "{{ secrets.TOKEN }}" },
          next: ["leak", "fail"],
        },
        { id: "leak", type: "transform", expression: "secrets.TOKEN" },
        { id: "fail", type: "fail", message: "token is {{ secrets.TOKEN }}" },
      ],
    });
    const hits = ep.hitsOf("/echo").length;
    const body = await ran(ws.key, id, {});
    expect(ep.hitsOf("/echo").length).toBe(hits + 1);
    expect(ep.hitsOf("/echo").at(-1)?.headers["x-token"]).toBe(SECRET);
    expect(body.status).toBe("error");
    const call = body.blocks.find((b) => b.id === "call");
    expect(call?.status).toBe("completed");
    expect(JSON.stringify(call?.output)).toMatch(/redacted/);
    expect(body.blocks.find((b) => b.id === "fail")?.error).toMatch(/token is .*redacted/);
    expect(JSON.stringify(body)).not.toContain(SECRET);
  });
});

describe("requests a test run refuses", () => {
  it("404 for an unknown workflow, table, row, group or another workspace's workflow; 400 for fields that do not fit together", async () => {
    const { tableId, workflowId, rowIds } = await workflowTable(key, {
      workflow: classifyDefinition,
      outputs: { out: "result" },
      group: { inputs: {} },
    });
    const rowId = rowIds[0] ?? "";
    const other = await workflow(key, classifyDefinition);
    const stranger = (await newWorkspace()).key;
    const cases: [string, string, TestBody, number, string, string | null][] = [
      ["unknown workflow", "wf_nope", {}, 404, "not_found", null],
      ["another workspace's workflow", workflowId, {}, 404, "not_found", null],
      ["unknown table", workflowId, { tableId: "tbl_nope", rowId }, 404, "not_found", null],
      ["unknown row", workflowId, { tableId, rowId: "row_nope" }, 404, "not_found", null],
      ["unknown group", workflowId, { tableId, rowId, groupId: "nope" }, 404, "not_found", null],
      [
        "a group of another workflow",
        other,
        { tableId, rowId, groupId: "g" },
        400,
        "validation_failed",
        "groupId",
      ],
      ["rowId without tableId", workflowId, { rowId }, 400, "validation_failed", "tableId"],
      ["tableId without rowId", workflowId, { tableId }, 400, "validation_failed", "rowId"],
      ["groupId without a row", workflowId, { groupId: "g" }, 400, "validation_failed", "tableId"],
      [
        "a definition and a version",
        workflowId,
        { definition: classifyDefinition, version: "live" },
        400,
        "validation_failed",
        "version",
      ],
      [
        "a definition with a dangling next",
        workflowId,
        { definition: { blocks: [{ id: "a", type: "transform", expression: "1", next: "b" }] } },
        400,
        "validation_failed",
        "definition.blocks.0.next",
      ],
      [
        "a definition with no blocks (its schema)",
        workflowId,
        { definition: { blocks: [] } },
        400,
        "validation_failed",
        "definition.blocks",
      ],
    ];
    for (const [what, id, body, status, code, path] of cases) {
      const k = what === "another workspace's workflow" ? stranger : key;
      const r = await refused(k, id, body);
      expect([what, r.status, r.error.code]).toEqual([what, status, code]);
      if (path)
        expect(
          r.error.issues?.map((i) => i.path),
          what,
        ).toContain(path);
    }
  });
});

describe("paid blocks", () => {
  it("without allowPaid: 400 naming the paid blocks, in the definition and in a sub-workflow; no provider is called", async () => {
    const ws = await lookupWorkspace("/never");
    const direct = await workflow(ws.key, lookupDefinition);
    const r = await refused(ws.key, direct, { inputs: { domain: "acme.test" } });
    expect([r.status, r.error.code]).toEqual([400, "validation_failed"]);
    expect(r.error.message).toMatch(/look \(company_lookup\)/);
    expect(r.error.issues?.[0]?.path).toBe("allowPaid");
    const parent = await workflow(ws.key, {
      blocks: [{ id: "sub", type: "workflow", workflowId: direct, inputs: { domain: "'x.test'" } }],
    });
    const nested = await refused(ws.key, parent, {});
    expect(nested.status).toBe(400);
    expect(nested.error.message).toMatch(/sub › look \(company_lookup\)/);
    // A free enrichment is not a paid block.
    const free = await workflow(ws.key, {
      blocks: [
        {
          id: "mail",
          type: "enrichment",
          enrichmentId: "email_domain",
          inputs: { email: "'a@b.test'" },
        },
      ],
    });
    expect((await test(ws.key, free, {})).response.status).toBe(200);
    expect(ep.hitsOf("/never")).toHaveLength(0);
  });

  it("with allowPaid: the provider is called and the answer charged its price (GET /api/usage moves by it, nothing stays reserved)", async () => {
    const ws = await lookupWorkspace("/found");
    ep.on("/found", async (hit) => ({
      status: 200,
      body: { name: `Company of ${hit.query.get("domain")}` },
    }));
    const id = await workflow(ws.key, lookupDefinition);
    const before = await usage(ws.key);
    const body = await ran(ws.key, id, { inputs: { domain: "acme.test" }, allowPaid: true });
    expect(body.status).toBe("completed");
    expect(body.outputs).toBe("Company of acme.test");
    expect(body.costCredits).toBe(COST);
    const after = await usage(ws.key);
    expect(after.used - before.used).toBe(COST);
    expect(after.reserved).toBe(0);
    expect(ep.hitsOf("/found")).toHaveLength(1);
  });

  it("a priced llm model is a paid block; an unpriced one is not", async () => {
    vi.stubEnv("CELLFLOW_LLM_PRICES", JSON.stringify({ "priced-model": { inputPer1k: 1 } }));
    try {
      const ask = (model: string): Definition => ({
        blocks: [{ id: "ask", type: "llm", model, prompt: "hello" }],
      });
      const priced = await refused(key, await workflow(key, ask("priced-model")), {});
      expect(priced.status).toBe(400);
      expect(priced.error.message).toMatch(/ask \(llm priced-model\)/);
      // Runs (and fails on the missing key: the workspace has no LLM_API_KEY).
      const free = await ran(key, await workflow(key, ask("other-model")), {});
      expect(free.status).toBe("error");
      expect(free.error).toMatch(/LLM_API_KEY/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("an llm block of a priced model, with allowPaid: charged the price of the tokens the model used", async () => {
    const server = await startLlmServer();
    vi.stubEnv(
      "CELLFLOW_LLM_PRICES",
      JSON.stringify({ "priced-model": { inputPer1k: 1, outputPer1k: 2 } }),
    );
    try {
      const ws = await newWorkspace();
      await apiClient(ws.key).PUT("/api/secrets/{name}", {
        params: { path: { name: "LLM_API_KEY" } },
        body: { value: "llm-key-for-the-test" },
      });
      const id = await workflow(ws.key, {
        inputs: [{ name: "topic", type: "text", required: true }],
        blocks: [
          {
            id: "ask",
            type: "llm",
            baseUrl: server.openaiBaseUrl,
            model: "priced-model",
            prompt: "Say something about {{ inputs.topic }}",
            maxTokens: 200,
          },
        ],
      });
      const body = await ran(ws.key, id, { inputs: { topic: "tests" }, allowPaid: true });
      expect(body.status, body.error ?? "").toBe("completed");
      expect(server.requests).toHaveLength(1);
      const call = server.requests[0];
      // 1 milli-credit per input token, 2 per output token.
      const milli = (call?.inputTokens ?? 0) + 2 * (call?.outputTokens ?? 0);
      expect(milli).toBeGreaterThan(0);
      expect(body.costCredits).toBe(milli / 1000);
      const after = await usage(ws.key);
      expect([after.used, after.reserved]).toEqual([milli / 1000, 0]);
    } finally {
      vi.unstubAllEnvs();
      await server.close();
    }
  });

  it("paid answers inside sub-workflows and foreach items are charged too, each once", async () => {
    const ws = await lookupWorkspace("/nested");
    ep.on("/nested", async (hit) => ({
      status: 200,
      body: { name: `Company of ${hit.query.get("domain")}` },
    }));
    const child = await workflow(ws.key, lookupDefinition);
    const parent = await workflow(ws.key, {
      blocks: [
        {
          id: "one",
          type: "workflow",
          workflowId: child,
          inputs: { domain: "'one.test'" },
          next: "each",
        },
        {
          id: "each",
          type: "foreach",
          items: "[{ 'domain': 'a.test' }, { 'domain': 'b.test' }]",
          workflowId: child,
        },
      ],
    });
    const before = await usage(ws.key);
    const body = await ran(ws.key, parent, { allowPaid: true });
    expect(body.status).toBe("completed");
    expect(body.costCredits).toBe(3 * COST);
    expect(body.blocks.map((b) => b.id)).toEqual(["one", "each"]);
    const after = await usage(ws.key);
    expect([after.used - before.used, after.reserved]).toEqual([3 * COST, 0]);
    expect(ep.hitsOf("/nested")).toHaveLength(3);
  });

  it("a miss costs nothing; a call the month's cap refuses is not made and ends the test with the reason", async () => {
    const ws = await lookupWorkspace("/miss");
    ep.on("/miss", async () => ({ status: 404, body: { error: "no such company" } }));
    const id = await workflow(ws.key, lookupDefinition);
    const miss = await ran(ws.key, id, { inputs: { domain: "acme.test" }, allowPaid: true });
    expect([miss.status, miss.costCredits]).toEqual(["completed", 0]);
    expect((await usage(ws.key)).used).toBe(0);

    const cap = planLimits("free").monthlyCredits ?? 0;
    await getDatabase().db.execute(
      sql`update workspaces set plan = 'free', used_milli = ${(cap - 2) * 1000},
                 credits_month = date_trunc('month', now() at time zone 'utc')::date
           where id = ${ws.id}`,
    );
    const hits = ep.hitsOf("/miss").length;
    const body = await ran(ws.key, id, { inputs: { domain: "acme.test" }, allowPaid: true });
    expect(body.status).toBe("error");
    expect(body.error).toMatch(/month's credits are used up/);
    expect(body.blocks.map((b) => [b.id, b.status])).toEqual([["look", "cancelled"]]);
    expect(ep.hitsOf("/miss")).toHaveLength(hits);
    const after = await usage(ws.key);
    expect([after.used, after.reserved]).toEqual([cap - 2, 0]);
  });

  it("the time cap stops a paid call in flight: nothing charged, the reservation given back", async () => {
    const ws = await lookupWorkspace("/hang");
    ep.on("/hang", async () => "hang");
    const id = await workflow(ws.key, lookupDefinition);
    vi.stubEnv("CELLFLOW_TEST_RUN_TIMEOUT_MS", "500");
    try {
      const body = await ran(ws.key, id, { inputs: { domain: "acme.test" }, allowPaid: true });
      expect(body.status).toBe("error");
      expect(body.error).toMatch(/took longer than 500 ms/);
      expect(body.costCredits).toBe(0);
    } finally {
      vi.unstubAllEnvs();
    }
    const after = await usage(ws.key);
    expect([after.used, after.reserved]).toEqual([0, 0]);
  });

  it("a client that leaves stops the run: no answer (499); the call it cut off is not charged, its reservation given back", async () => {
    const ws = await lookupWorkspace("/slow");
    let answer: (() => void) | undefined;
    ep.on("/slow", async (hit) => {
      await new Promise<void>((resolve) => {
        answer = resolve;
      });
      return { status: 200, body: { name: `Company of ${hit.query.get("domain")}` } };
    });
    const id = await workflow(ws.key, lookupDefinition);
    const found = await resolveRoute(`/api/workflows/${id}/test`, "POST");
    if (typeof found === "string") throw new Error(found);
    const client = new AbortController();
    const pending = found.handler(
      new Request(`http://cellflow.test/api/workflows/${id}/test`, {
        method: "POST",
        headers: { authorization: `Bearer ${ws.key}`, "content-type": "application/json" },
        body: JSON.stringify({ inputs: { domain: "acme.test" }, allowPaid: true }),
        signal: client.signal,
      }),
      { params: Promise.resolve({ id }) },
    );
    // The call is out (so its credits are reserved) when the client leaves.
    await vi.waitFor(() => expect(answer).toBeDefined(), { timeout: 10_000 });
    expect((await usage(ws.key)).reserved).toBe(COST);
    client.abort();
    const res = await pending;
    answer?.();
    expect(res.status).toBe(499);
    const after = await usage(ws.key);
    expect([after.used, after.reserved]).toEqual([0, 0]);
  });

  it("a client that leaves is charged the paid answers finished blocks got: their effects ran", async () => {
    const ws = await lookupWorkspace("/found");
    ep.on("/found", async (hit) => ({
      status: 200,
      body: { name: `Company of ${hit.query.get("domain")}` },
    }));
    let release: (() => void) | undefined;
    ep.on("/out", async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return { status: 200, body: {} };
    });
    // The paid answer goes out through an http block; the client leaves while it is sent.
    const id = await workflow(ws.key, {
      inputs: [{ name: "domain", type: "text", required: true }],
      blocks: [
        {
          id: "look",
          type: "enrichment",
          enrichmentId: "company_lookup",
          inputs: { domain: "inputs.domain" },
          next: "send",
        },
        {
          id: "send",
          type: "http",
          method: "POST",
          url: `${ep.url}/out`,
          body: "{{ blocks.look.name }}",
        },
      ],
    });
    const found = await resolveRoute(`/api/workflows/${id}/test`, "POST");
    if (typeof found === "string") throw new Error(found);
    const client = new AbortController();
    const pending = found.handler(
      new Request(`http://cellflow.test/api/workflows/${id}/test`, {
        method: "POST",
        headers: { authorization: `Bearer ${ws.key}`, "content-type": "application/json" },
        body: JSON.stringify({ inputs: { domain: "acme.test" }, allowPaid: true }),
        signal: client.signal,
      }),
      { params: Promise.resolve({ id }) },
    );
    await vi.waitFor(() => expect(release).toBeDefined(), { timeout: 10_000 });
    client.abort();
    const res = await pending;
    release?.();
    expect(res.status).toBe(499);
    const after = await usage(ws.key);
    expect([after.used, after.reserved]).toEqual([COST, 0]);
  });
});

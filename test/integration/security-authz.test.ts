/**
 * The authorization matrix (API.md "Conventions", docs/api.md "Sessions"): every route and
 * method, called with every kind of bad or foreign credential, answers exactly what the
 * contract prescribes — 401 for credentials that open no workspace, 404 for another
 * workspace's resources — in the API error shape, writes nothing, and never shows
 * anything of the workspace it was refused. Routes are discovered from the files, and a
 * route this matrix cannot call fails the suite: no route is added unprotected unnoticed.
 */
import { createHmac, randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client";
import { getDatabase } from "../../db/instance";
import { GET as eventsRoute } from "../../src/app/api/tables/[id]/events/route";
import { closeBackend } from "../../src/backends/instance";
import { ApiError } from "../../src/contracts/common";
import { generateApiKey } from "../../src/store/api-keys/keys";
import { registerApiKey } from "../../src/store/api-keys/register";
import { revokeApiKey } from "../../src/store/api-keys/revoke";
import { type ApiResponse, type CallOptions, call, listRoutes } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { dbFingerprint } from "../helpers/fingerprint";
import { newWorkspace } from "../helpers/fixtures";

const ADMIN_TOKEN = `admin-${randomBytes(12).toString("hex")}`;
const UI = { "x-cellflow-ui": "1" };
const cookie = (key: string) => ({ cookie: `cellflow_session=${key}` });

interface Workspace {
  id: string;
  key: string;
}

/** Everything a workspace owns that a route can name, and the text that identifies it. */
interface Fixture {
  ws: Workspace;
  tag: string;
  tableId: string;
  rowId: string;
  workflowId: string;
  hookId: string;
  hookSecret: string;
  dispatchId: string;
  executionId: string;
  secretName: string;
}

let victim: Fixture;
let intruder: Fixture;
/** A second key of the victim's own workspace, revoked: the strongest "revoked" case. */
let revokedKey: string;

afterAll(async () => {
  await closeBackend();
});

beforeAll(async () => {
  await useTestDatabase();
  process.env.CELLFLOW_ADMIN_TOKEN = ADMIN_TOKEN;
  victim = await makeFixture(await newWorkspace("victim workspace"), "victim");
  intruder = await makeFixture(await newWorkspace("intruder workspace"), "intruder");
  revokedKey = generateApiKey();
  expect(await registerApiKey(getDatabase().db, victim.ws.id, revokedKey)).toEqual({ ok: true });
  expect(await revokeApiKey(getDatabase().db, revokedKey)).toBe(true);
});

afterAll(() => {
  delete process.env.CELLFLOW_ADMIN_TOKEN;
});

function must<T>(res: ApiResponse<T>, status: number): T {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  return res.body;
}

/** A table with a row, a queued cell (its run), a hook, a workflow and a secret. */
async function makeFixture(ws: Workspace, role: string): Promise<Fixture> {
  const tag = `${role}${randomBytes(5).toString("hex")}`;
  const key = ws.key;
  const wf = must(
    await call<{ id: string }>("POST", "/api/workflows", {
      key,
      body: {
        name: `${tag} workflow`,
        definition: { blocks: [{ id: "done", type: "transform", expression: "'ok'" }] },
      },
    }),
    201,
  );
  const table = must(
    await call<{ id: string }>("POST", "/api/tables", {
      key,
      body: {
        name: `${tag} table`,
        columns: [
          { id: "v", name: `${tag} column`, type: "text" },
          { id: "out", name: "Out", type: "text" },
        ],
        groups: [
          {
            id: "g",
            name: `${tag} group`,
            kind: "workflow",
            workflowId: wf.id,
            outputs: [{ columnId: "out", from: "done" }],
          },
        ],
      },
    }),
    201,
  );
  const rows = must(
    await call<{ rows: { id: string }[] }>("POST", `/api/tables/${table.id}/rows`, {
      key,
      body: { rows: [{ data: { v: `${tag} value` } }] },
    }),
    201,
  );
  const rowId = rows.rows[0]?.id ?? "";
  // No worker runs in this file: the cell stays queued, which is all the routes need.
  const run = must(
    await call<{ dispatchId: string }>("POST", `/api/tables/${table.id}/runs`, {
      key,
      body: { mode: "all" },
    }),
    202,
  );
  const row = must(
    await call<{ cells: Record<string, { executionId: string }> }>(
      "GET",
      `/api/tables/${table.id}/rows/${rowId}`,
      { key },
    ),
    200,
  );
  const hook = must(
    await call<{ id: string; secret: string }>("POST", `/api/tables/${table.id}/hooks`, {
      key,
      body: { action: "insert_rows" },
    }),
    201,
  );
  // Two secrets: the matrix replaces one (PUT) and deletes the other, so a foreign PUT
  // that creates the caller's own secret of that name cannot turn the DELETE into a 204.
  const secretName = `${role.toUpperCase()}_SECRET`;
  for (const name of [secretName, `${secretName}_PUT`])
    must(
      await call("PUT", `/api/secrets/${name}`, { key, body: { value: `${tag} secret value` } }),
      200,
    );
  return {
    ws,
    tag,
    tableId: table.id,
    rowId,
    workflowId: wf.id,
    hookId: hook.id,
    hookSecret: hook.secret,
    dispatchId: run.dispatchId,
    executionId: row.cells.g?.executionId ?? "",
    secretName,
  };
}

/**
 * Everything of one workspace a request could change, as one string: every row of every
 * table it owns (directly or through its tables, workflows and hooks), as Postgres prints it.
 */
async function workspaceFingerprint(workspaceId: string): Promise<string> {
  const [row] = await queryRows<Record<string, unknown>>(
    getDatabase().db,
    sql`with t as (select id from tables where workspace_id = ${workspaceId}),
             w as (select id from workflows where workspace_id = ${workspaceId}),
             h as (select id from hooks where workspace_id = ${workspaceId})
      select
        (select string_agg(x::text, '|' order by x::text) from workspaces x where id = ${workspaceId}) as workspace,
        (select string_agg(x::text, '|' order by x::text) from api_keys x where workspace_id = ${workspaceId}) as keys,
        (select string_agg(x::text, '|' order by x::text) from tables x where workspace_id = ${workspaceId}) as tables,
        (select string_agg(x::text, '|' order by x::text) from rows x where table_id in (select id from t)) as rows,
        (select string_agg(x::text, '|' order by x::text) from cells x where table_id in (select id from t)) as cells,
        (select string_agg(x::text, '|' order by x::text) from dispatches x where table_id in (select id from t)) as dispatches,
        (select string_agg(x::text, '|' order by x::text) from events x where table_id in (select id from t)) as events,
        (select string_agg(x::text, '|' order by x::text) from workflows x where workspace_id = ${workspaceId}) as workflows,
        (select string_agg(x::text, '|' order by x::text) from workflow_versions x where workflow_id in (select id from w)) as versions,
        (select string_agg(x::text, '|' order by x::text) from hooks x where workspace_id = ${workspaceId}) as hooks,
        (select string_agg(x::text, '|' order by x::text) from hook_deliveries x where hook_id in (select id from h)) as deliveries,
        (select string_agg(x::text, '|' order by x::text) from secrets x where workspace_id = ${workspaceId}) as secrets`,
  );
  return JSON.stringify(row);
}

/** What of the victim must never appear in an answer to someone else. */
function victimMarkers(f: Fixture): string[] {
  return [
    f.ws.id,
    f.ws.key,
    revokedKey,
    f.tag,
    f.tableId,
    f.rowId,
    f.workflowId,
    f.hookId,
    f.hookSecret,
    f.dispatchId,
    f.executionId,
    // Not the secret names: any workspace may pick the same one (the values carry the tag).
    "victim workspace",
  ];
}

/** Markers the request itself carried are echoed legitimately (a path id in a message). */
function expectNoLeak(res: ApiResponse, sent: string): void {
  const text = typeof res.body === "string" ? res.body : JSON.stringify(res.body);
  const answer = `${text}\n${[...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join("\n")}`;
  for (const marker of victimMarkers(victim)) {
    if (marker === "" || sent.includes(marker)) continue;
    expect(answer, `the answer shows the victim's ${JSON.stringify(marker)}`).not.toContain(marker);
  }
}

function expectError(res: ApiResponse, status: number, code: string, what: string): void {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
  const parsed = ApiError.safeParse(res.body);
  expect(parsed.success, `${what}: not the error shape: ${JSON.stringify(res.body)}`).toBe(true);
  expect(parsed.data?.error.code, what).toBe(code);
  expect(res.headers.getSetCookie(), `${what} sets no cookie`).toEqual([]);
}

interface Req {
  path: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

/**
 * A route called with a workspace's credentials. `target` names whose resources the path
 * and body point at. `scope`: "resource" routes name a resource (another workspace's →
 * 404); "own" routes act on the caller's own workspace whatever it is (list, create).
 * `ok` is what the owner gets with a valid key: the request is sound, only its
 * credentials decide.
 */
interface KeyedSpec {
  kind: "keyed";
  scope: "resource" | "own";
  ok: number;
  request: (target: Fixture) => Req;
  /** The caller's own table with the target's other ids: a row, run, hook of someone else. */
  mixed?: (own: Fixture, target: Fixture) => Req;
}

interface PublicSpec {
  kind: "public";
}

const csv = (f: Fixture): Req => ({
  path: `/api/tables/${f.tableId}/import`,
  rawBody: "v\ncsv value\n",
  headers: { "content-type": "text/csv" },
});

const MATRIX: Record<string, KeyedSpec | PublicSpec> = {
  "GET /api/health": { kind: "public" },
  "POST /api/hooks/[hookId]": { kind: "public" },
  "POST /api/admin/workspaces": { kind: "public" },
  "POST /api/session": { kind: "public" },
  "DELETE /api/session": { kind: "public" },
  "GET /api/session": {
    kind: "keyed",
    scope: "own",
    ok: 200,
    request: () => ({ path: "/api/session" }),
  },
  "GET /api/enrichments": {
    kind: "keyed",
    scope: "own",
    ok: 200,
    request: () => ({ path: "/api/enrichments" }),
  },
  "GET /api/usage": {
    kind: "keyed",
    scope: "own",
    ok: 200,
    request: () => ({ path: "/api/usage" }),
  },
  "GET /api/secrets": {
    kind: "keyed",
    scope: "own",
    ok: 200,
    request: () => ({ path: "/api/secrets" }),
  },
  "PUT /api/secrets/[name]": {
    kind: "keyed",
    scope: "own",
    ok: 200,
    request: (f) => ({
      path: `/api/secrets/${f.secretName}_PUT`,
      body: { value: "replaced value" },
    }),
  },
  "DELETE /api/secrets/[name]": {
    kind: "keyed",
    scope: "resource",
    ok: 204,
    request: (f) => ({ path: `/api/secrets/${f.secretName}` }),
  },
  "GET /api/tables": {
    kind: "keyed",
    scope: "own",
    ok: 200,
    request: () => ({ path: "/api/tables" }),
  },
  "POST /api/tables": {
    kind: "keyed",
    scope: "own",
    ok: 201,
    request: () => ({ path: "/api/tables", body: { name: "created by the matrix" } }),
  },
  "GET /api/tables/[id]": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}` }),
  },
  "PATCH /api/tables/[id]": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}`, body: { name: "renamed" } }),
  },
  "DELETE /api/tables/[id]": {
    kind: "keyed",
    scope: "resource",
    ok: 204,
    request: (f) => ({ path: `/api/tables/${f.tableId}` }),
  },
  "GET /api/tables/[id]/events": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/events` }),
  },
  "GET /api/tables/[id]/export": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/export` }),
  },
  "POST /api/tables/[id]/import": { kind: "keyed", scope: "resource", ok: 201, request: csv },
  "GET /api/tables/[id]/hooks": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/hooks` }),
  },
  "POST /api/tables/[id]/hooks": {
    kind: "keyed",
    scope: "resource",
    ok: 201,
    request: (f) => ({ path: `/api/tables/${f.tableId}/hooks`, body: { action: "run" } }),
  },
  "DELETE /api/tables/[id]/hooks/[hookId]": {
    kind: "keyed",
    scope: "resource",
    ok: 204,
    request: (f) => ({ path: `/api/tables/${f.tableId}/hooks/${f.hookId}` }),
    mixed: (own, t) => ({ path: `/api/tables/${own.tableId}/hooks/${t.hookId}` }),
  },
  "GET /api/tables/[id]/rows": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/rows` }),
  },
  "POST /api/tables/[id]/rows": {
    kind: "keyed",
    scope: "resource",
    ok: 201,
    request: (f) => ({
      path: `/api/tables/${f.tableId}/rows`,
      body: { rows: [{ data: { v: "inserted" } }] },
    }),
  },
  "GET /api/tables/[id]/rows/[rowId]": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/rows/${f.rowId}` }),
    mixed: (own, t) => ({ path: `/api/tables/${own.tableId}/rows/${t.rowId}` }),
  },
  "PATCH /api/tables/[id]/rows/[rowId]": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({
      path: `/api/tables/${f.tableId}/rows/${f.rowId}`,
      body: { data: { v: "edited" } },
    }),
    mixed: (own, t) => ({
      path: `/api/tables/${own.tableId}/rows/${t.rowId}`,
      body: { data: { v: "edited" } },
    }),
  },
  "DELETE /api/tables/[id]/rows/[rowId]": {
    kind: "keyed",
    scope: "resource",
    ok: 204,
    request: (f) => ({ path: `/api/tables/${f.tableId}/rows/${f.rowId}` }),
    mixed: (own, t) => ({ path: `/api/tables/${own.tableId}/rows/${t.rowId}` }),
  },
  "POST /api/tables/[id]/rows/[rowId]/cells/[groupId]/resume": {
    kind: "keyed",
    scope: "resource",
    // The owner's cell is queued, not paused: 409 shows the request got past every check
    // of who is asking and reached the cell.
    ok: 409,
    request: (f) => ({
      path: `/api/tables/${f.tableId}/rows/${f.rowId}/cells/g/resume`,
      body: { executionId: f.executionId, data: { approved: true } },
    }),
    mixed: (own, t) => ({
      path: `/api/tables/${own.tableId}/rows/${t.rowId}/cells/g/resume`,
      body: { executionId: t.executionId, data: { approved: true } },
    }),
  },
  "GET /api/tables/[id]/runs": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/runs` }),
  },
  "POST /api/tables/[id]/runs": {
    kind: "keyed",
    scope: "resource",
    ok: 202,
    request: (f) => ({ path: `/api/tables/${f.tableId}/runs`, body: { mode: "all" } }),
  },
  "GET /api/tables/[id]/runs/[dispatchId]": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/runs/${f.dispatchId}` }),
    mixed: (own, t) => ({ path: `/api/tables/${own.tableId}/runs/${t.dispatchId}` }),
  },
  "POST /api/tables/[id]/runs/cancel": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/runs/cancel`, body: {} }),
  },
  "GET /api/workflows": {
    kind: "keyed",
    scope: "own",
    ok: 200,
    request: () => ({ path: "/api/workflows" }),
  },
  "POST /api/workflows": {
    kind: "keyed",
    scope: "own",
    ok: 201,
    request: () => ({
      path: "/api/workflows",
      body: {
        name: "created by the matrix",
        definition: { blocks: [{ id: "a", type: "transform", expression: "1" }] },
      },
    }),
  },
  "GET /api/workflows/[id]": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/workflows/${f.workflowId}` }),
  },
  "PUT /api/workflows/[id]": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/workflows/${f.workflowId}`, body: { name: "renamed" } }),
  },
  "POST /api/workflows/[id]/deploy": {
    kind: "keyed",
    scope: "resource",
    ok: 201,
    request: (f) => ({ path: `/api/workflows/${f.workflowId}/deploy` }),
  },
};

/** Credentials that open no workspace: each must be a 401 wherever a key is needed. */
interface BadCredential {
  name: string;
  headers: () => Record<string, string>;
  /** Only requests that change something (the CSRF guard lets reads through). */
  writesOnly?: boolean;
}

const BAD_CREDENTIALS: BadCredential[] = [
  { name: "no credentials", headers: () => ({}) },
  { name: "a malformed bearer key", headers: () => ({ authorization: "Bearer not a key" }) },
  { name: "another auth scheme", headers: () => ({ authorization: `Basic ${btoa("a:b")}` }) },
  {
    name: "a well-formed key never issued",
    headers: () => ({ authorization: `Bearer ${generateApiKey()}` }),
  },
  { name: "a revoked key", headers: () => ({ authorization: `Bearer ${revokedKey}` }) },
  {
    name: "a revoked key as the session cookie",
    headers: () => ({ ...cookie(revokedKey), ...UI }),
  },
  {
    name: "a malformed session cookie",
    headers: () => ({ cookie: "cellflow_session=%00'; drop", ...UI }),
  },
  {
    name: "a valid session cookie without x-cellflow-ui",
    headers: () => cookie(victim.ws.key),
    writesOnly: true,
  },
  {
    name: "a valid session cookie with a wrong x-cellflow-ui",
    headers: () => ({ ...cookie(victim.ws.key), "x-cellflow-ui": "true" }),
    writesOnly: true,
  },
];

/** The intruder's valid credentials, both ways the API accepts them. */
const FOREIGN_CREDENTIALS: { name: string; headers: () => Record<string, string> }[] = [
  {
    name: "another workspace's key",
    headers: () => ({ authorization: `Bearer ${intruder.ws.key}` }),
  },
  {
    name: "another workspace's session cookie",
    headers: () => ({ ...cookie(intruder.ws.key), ...UI }),
  },
];

function options(req: Req, headers: Record<string, string>): CallOptions {
  return {
    headers: { ...req.headers, ...headers },
    ...(req.rawBody !== undefined ? { rawBody: req.rawBody } : {}),
    ...(req.body !== undefined ? { body: req.body } : {}),
  };
}

const sentText = (req: Req, headers: Record<string, string>) =>
  JSON.stringify([req.path, req.body ?? req.rawBody ?? null, headers]);

function keyedCases(): [string, string, KeyedSpec][] {
  return Object.entries(MATRIX).flatMap(([id, spec]) => {
    const [method = "", template = ""] = id.split(" ");
    return spec.kind === "keyed" ? [[method, template, spec] as [string, string, KeyedSpec]] : [];
  });
}

describe("the matrix covers the API", () => {
  it("every route and method the server serves has an expectation here, and nothing else does", async () => {
    const served = (await listRoutes()).flatMap((r) => r.methods.map((m) => `${m} ${r.template}`));
    const unknown = served.filter((s) => !Object.hasOwn(MATRIX, s));
    expect(unknown, "routes the authorization matrix does not know how to call").toEqual([]);
    expect(Object.keys(MATRIX).filter((k) => !served.includes(k))).toEqual([]);
  });

  it("unknown API paths answer 404 in the error shape, whatever the credentials", async () => {
    const credentials: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${intruder.ws.key}` },
    ];
    for (const headers of credentials) {
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
        const res = await call(method, "/api/tables-but-not-really", { headers });
        expectError(res, 404, "not_found", `${method} unknown path`);
      }
    }
  });
});

describe("credentials that open no workspace are a 401 on every keyed route and write nothing", () => {
  for (const cred of BAD_CREDENTIALS) {
    it(`${cred.name} → 401`, async () => {
      for (const [method, template, spec] of keyedCases()) {
        if (cred.writesOnly && method === "GET") continue;
        const req = spec.request(victim);
        const headers = cred.headers();
        const before = await dbFingerprint();
        const res = await call(method, req.path, options(req, headers));
        expectError(res, 401, "unauthorized", `${method} ${template} with ${cred.name}`);
        expectNoLeak(res, sentText(req, headers));
        expect(await dbFingerprint(), `${method} ${template} wrote`).toBe(before);
      }
    });
  }
});

describe("another workspace's resources are a 404 and stay untouched", () => {
  for (const cred of FOREIGN_CREDENTIALS) {
    it(`${cred.name}: resource routes → 404 (never 403), own-scope routes act only on the caller's workspace`, async () => {
      for (const [method, template, spec] of keyedCases()) {
        const what = `${method} ${template} with ${cred.name}`;
        const req = spec.request(victim);
        const headers = cred.headers();
        const before = await dbFingerprint();
        const victimBefore = await workspaceFingerprint(victim.ws.id);
        const res = await call(method, req.path, options(req, headers));
        if (spec.scope === "resource") {
          expectError(res, 404, "not_found", what);
          expect(await dbFingerprint(), `${what} wrote`).toBe(before);
        } else {
          expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(spec.ok);
        }
        expectNoLeak(res, sentText(req, headers));
        expect(await workspaceFingerprint(victim.ws.id), `${what} changed the victim`).toBe(
          victimBefore,
        );
      }
    });
  }

  it("the caller's own table with another workspace's row, run, hook or cell in the path → 404", async () => {
    for (const [method, template, spec] of keyedCases()) {
      if (!spec.mixed) continue;
      const what = `${method} ${template} (own table, victim's ids)`;
      const req = spec.mixed(intruder, victim);
      const headers = { authorization: `Bearer ${intruder.ws.key}` };
      const before = await dbFingerprint();
      const res = await call(method, req.path, options(req, headers));
      expectError(res, 404, "not_found", what);
      expectNoLeak(res, sentText(req, headers));
      expect(await dbFingerprint(), `${what} wrote`).toBe(before);
    }
  });

  it("another workspace's ids inside a body reach nothing of that workspace", async () => {
    const key = intruder.ws.key;
    const victimBefore = await workspaceFingerprint(victim.ws.id);
    const bodies: [string, string, unknown][] = [
      // A group running the victim's workflow: refused as an unknown workflow.
      [
        "POST",
        "/api/tables",
        {
          name: "borrowing",
          columns: [{ id: "out", name: "Out", type: "text" }],
          groups: [
            {
              id: "g",
              name: "G",
              kind: "workflow",
              workflowId: victim.workflowId,
              outputs: [{ columnId: "out", from: "done" }],
            },
          ],
        },
      ],
      ["POST", `/api/tables/${intruder.tableId}/runs`, { mode: "all", rowIds: [victim.rowId] }],
      ["POST", `/api/tables/${intruder.tableId}/runs/cancel`, { dispatchId: victim.dispatchId }],
      ["POST", `/api/tables/${intruder.tableId}/runs/cancel`, { rowIds: [victim.rowId] }],
    ];
    for (const [method, path, body] of bodies) {
      const res = await call(method, path, { key, body });
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
      if (res.status >= 400) ApiError.parse(res.body);
      expectNoLeak(res, JSON.stringify([path, body]));
    }
    const table = await call("POST", "/api/tables", { key, body: bodies[0]?.[2] });
    expectError(table, 400, "validation_failed", "a group with another workspace's workflow");
    expect(await workspaceFingerprint(victim.ws.id)).toBe(victimBefore);
  });
});

describe("public routes keep their own rules", () => {
  const everyCredential = () => [
    ...BAD_CREDENTIALS.map((c) => ({ name: c.name, headers: c.headers() })),
    ...FOREIGN_CREDENTIALS.map((c) => ({ name: c.name, headers: c.headers() })),
    { name: "the victim's own key", headers: { authorization: `Bearer ${victim.ws.key}` } },
  ];

  it("GET /api/health answers anyone, and shows nothing of any workspace", async () => {
    for (const cred of everyCredential()) {
      const res = await call("GET", "/api/health", { headers: cred.headers });
      expect(res.status, cred.name).toBe(200);
      expect(res.body).toMatchObject({ ok: true, db: "ok" });
      expectNoLeak(res, sentText({ path: "/api/health" }, cred.headers));
    }
  });

  it("POST /api/hooks/:hookId takes no API key or cookie instead of a signature: 401, nothing inserted", async () => {
    const body = JSON.stringify({ rows: [{ data: { v: "pushed" } }] });
    for (const cred of everyCredential()) {
      const headers = { ...cred.headers, "content-type": "application/json" };
      const before = await dbFingerprint();
      const res = await call("POST", `/api/hooks/${victim.hookId}`, { rawBody: body, headers });
      expectError(res, 401, "unauthorized", `hook with ${cred.name}`);
      expectNoLeak(res, sentText({ path: `/api/hooks/${victim.hookId}` }, headers));
      expect(await dbFingerprint()).toBe(before);
    }
  });

  it("a delivery signed with another hook's secret is refused like a wrong signature", async () => {
    const body = JSON.stringify({ rows: [{ data: { v: "pushed" } }] });
    const t = Math.floor(Date.now() / 1000);
    const v1 = createHmac("sha256", intruder.hookSecret).update(`${t}.${body}`).digest("hex");
    const before = await dbFingerprint();
    const res = await call("POST", `/api/hooks/${victim.hookId}`, {
      rawBody: body,
      headers: { "content-type": "application/json", "cellflow-signature": `t=${t},v1=${v1}` },
    });
    expectError(res, 401, "unauthorized", "hook signed with another hook's secret");
    expectNoLeak(res, `/api/hooks/${victim.hookId}`);
    expect(await dbFingerprint()).toBe(before);
  });

  it("POST /api/admin/workspaces takes only the admin token: any API key or cookie is a 401", async () => {
    for (const cred of everyCredential()) {
      const headers = { ...cred.headers, ...UI };
      const before = await dbFingerprint();
      const res = await call("POST", "/api/admin/workspaces", { body: { name: "x" }, headers });
      expectError(res, 401, "unauthorized", `admin with ${cred.name}`);
      expectNoLeak(res, sentText({ path: "/api/admin/workspaces" }, headers));
      expect(await dbFingerprint()).toBe(before);
    }
    const admitted = await call("POST", "/api/admin/workspaces", {
      key: ADMIN_TOKEN,
      body: { name: "admitted" },
    });
    expect(admitted.status).toBe(201);
  });

  it("POST /api/session signs in only with a live key: a bad one is a 401 with no cookie, a foreign one opens only its own workspace", async () => {
    for (const apiKey of ["not a key", generateApiKey(), revokedKey]) {
      const before = await dbFingerprint();
      const res = await call("POST", "/api/session", { body: { apiKey } });
      expectError(res, 401, "unauthorized", `sign-in with ${apiKey}`);
      expect(await dbFingerprint()).toBe(before);
    }
    // A session cookie does not sign anyone in: the body's key alone decides.
    const viaCookie = await call("POST", "/api/session", {
      body: { apiKey: revokedKey },
      headers: { ...cookie(victim.ws.key), ...UI },
    });
    expectError(viaCookie, 401, "unauthorized", "sign-in with a cookie and a revoked key");
    const foreign = await call("POST", "/api/session", { body: { apiKey: intruder.ws.key } });
    expect(foreign.status).toBe(200);
    expect(foreign.body).toEqual({
      workspace: { id: intruder.ws.id, name: "intruder workspace" },
    });
    expectNoLeak(foreign, "");
  });

  it("DELETE /api/session only clears the cookie, whoever asks", async () => {
    for (const cred of everyCredential()) {
      const before = await dbFingerprint();
      const res = await call("DELETE", "/api/session", { headers: cred.headers });
      expect(res.status, cred.name).toBe(204);
      expect(res.headers.getSetCookie()[0]).toMatch(/^cellflow_session=;.*Max-Age=0/);
      expect(await dbFingerprint()).toBe(before);
    }
  });
});

/** The event stream stays open by design: read its first answer, then hang up. */
async function openEvents(req: Req, key: string): Promise<number> {
  const controller = new AbortController();
  const url = new URL(req.path, "http://cellflow.test");
  const tableId = url.pathname.split("/")[3] ?? "";
  const res = await eventsRoute(
    new Request(url, {
      headers: { authorization: `Bearer ${key}` },
      signal: controller.signal,
    }),
    { params: Promise.resolve({ id: tableId }) },
  );
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  controller.abort();
  await res.body?.cancel();
  return res.status;
}

describe("the matrix's requests are sound: the owner's own key gets what the contract says", () => {
  it("every keyed route answers its owner with the expected status", async () => {
    const owner = await makeFixture(await newWorkspace("owner"), "owner");
    for (const [method, template, spec] of keyedCases()) {
      // Fresh resources for each: deletes and renames must not change what others see.
      const f =
        method === "DELETE" ? await makeFixture(owner.ws, `owner${method.toLowerCase()}`) : owner;
      const req = spec.request(f);
      const status = template.endsWith("/events")
        ? await openEvents(req, f.ws.key)
        : (await call(method, req.path, options(req, { authorization: `Bearer ${f.ws.key}` })))
            .status;
      expect(status, `${method} ${template}`).toBe(spec.ok);
    }
  });
});

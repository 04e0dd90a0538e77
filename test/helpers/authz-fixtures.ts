/**
 * The two workspaces of the authorization matrix — the victim and the intruder — with
 * everything each owns that a route can name, the credentials the matrix calls with, and
 * the checks it makes: the contract's error, nothing written, nothing of the victim shown.
 */
import { randomBytes } from "node:crypto";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect } from "vitest";
import { closeBackend } from "@/backends/instance";
import { ApiError } from "@/contracts/common";
import { generateApiKey } from "@/store/api-keys/keys";
import { registerApiKey } from "@/store/api-keys/register";
import { revokeApiKey } from "@/store/api-keys/revoke";
import { useTestDatabase } from "./db";
import { newWorkspace } from "./fixtures";
import { type ApiResponse, type CallOptions, call } from "./raw-api";

export const ADMIN_TOKEN = `admin-${randomBytes(12).toString("hex")}`;
export const UI = { "x-cellflow-ui": "1" };
export const cookie = (key: string) => ({ cookie: `cellflow_session=${key}` });

export interface Workspace {
  id: string;
  key: string;
}

/** Everything a workspace owns that a route can name, and the text that identifies it. */
export interface Fixture {
  ws: Workspace;
  tag: string;
  tableId: string;
  rowId: string;
  workflowId: string;
  hookId: string;
  hookSecret: string;
  viewId: string;
  scheduleId: string;
  destinationId: string;
  destinationSecret: string;
  dispatchId: string;
  executionId: string;
  secretName: string;
}

export let victim: Fixture;
export let intruder: Fixture;
/** A second key of the victim's own workspace, revoked: the strongest "revoked" case. */
export let revokedKey: string;

/** A database of the calling test file's own, with the victim's and the intruder's workspaces. */
export function setUpAuthzWorkspaces(): void {
  afterAll(async () => {
    await closeBackend();
  });

  beforeAll(async () => {
    await useTestDatabase();
    process.env.CELLFLOW_ADMIN_TOKEN = ADMIN_TOKEN;
    victim = await makeFixture(await newWorkspace("victim workspace"), "victim");
    intruder = await makeFixture(await newWorkspace("intruder workspace"), "intruder");
    revokedKey = generateApiKey();
    expect(
      await registerApiKey(getDatabase().db, { workspaceId: victim.ws.id, key: revokedKey }),
    ).toEqual({ ok: true });
    expect(await revokeApiKey(getDatabase().db, revokedKey)).toBe(true);
  });

  afterAll(() => {
    delete process.env.CELLFLOW_ADMIN_TOKEN;
  });
}

export function must<T>(res: ApiResponse<T>, status: number): T {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  return res.body;
}

/** A table with a row, a queued cell (its run), a hook, a workflow and a secret. */
export async function makeFixture(ws: Workspace, role: string): Promise<Fixture> {
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
  // Deployed once, so the workflow's version 1 exists for the history routes.
  must(await call("POST", `/api/workflows/${wf.id}/deploy`, { key }), 201);
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
  const owned = await tableResources(key, table.id, tag);
  const destination = await makeDestination(key, table.id, tag);
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
    ...owned,
    destinationId: destination.id,
    destinationSecret: destination.secret,
    dispatchId: run.dispatchId,
    executionId: row.cells.g?.executionId ?? "",
    secretName,
  };
}

/** What a table owns besides rows, runs and destinations: a webhook, a saved view, a schedule. */
async function tableResources(key: string, tableId: string, tag: string) {
  const hook = must(
    await call<{ id: string; secret: string }>("POST", `/api/tables/${tableId}/hooks`, {
      key,
      body: { action: "insert_rows" },
    }),
    201,
  );
  const view = must(
    await call<{ id: string }>("POST", `/api/tables/${tableId}/views`, {
      key,
      body: { name: `${tag} view`, where: [{ column: "v", op: "not_empty" }] },
    }),
    201,
  );
  const schedule = must(
    await call<{ id: string }>("POST", `/api/tables/${tableId}/schedules`, {
      key,
      body: { cron: "0 3 * * *", mode: "incomplete", enabled: false },
    }),
    201,
  );
  return { hookId: hook.id, hookSecret: hook.secret, viewId: view.id, scheduleId: schedule.id };
}

/** Port 9 (discard) on loopback: a delivery, were one made, is refused and retried. */
async function makeDestination(
  key: string,
  tableId: string,
  tag: string,
): Promise<{ id: string; secret: string }> {
  return must(
    await call<{ id: string; secret: string }>("POST", `/api/tables/${tableId}/destinations`, {
      key,
      body: { url: "http://127.0.0.1:9/hook", name: `${tag} destination` },
    }),
    201,
  );
}

/**
 * Everything of one workspace a request could change, as one string: every row of every
 * table it owns (directly or through its tables, workflows, hooks, saved views, schedules
 * and destinations), as Postgres prints it
 * (the `progress` events aside: the counters' fold writes those on its own clock).
 */
export async function workspaceFingerprint(workspaceId: string): Promise<string> {
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
        (select string_agg(x::text, '|' order by x::text) from events x where table_id in (select id from t) and x.kind <> 'progress') as events,
        (select string_agg(x::text, '|' order by x::text) from workflows x where workspace_id = ${workspaceId}) as workflows,
        (select string_agg(x::text, '|' order by x::text) from workflow_versions x where workflow_id in (select id from w)) as versions,
        (select string_agg(x::text, '|' order by x::text) from hooks x where workspace_id = ${workspaceId}) as hooks,
        (select string_agg(x::text, '|' order by x::text) from hook_deliveries x where hook_id in (select id from h)) as deliveries,
        (select string_agg(x::text, '|' order by x::text) from secrets x where workspace_id = ${workspaceId}) as secrets,
        (select string_agg(x::text, '|' order by x::text) from saved_views x where workspace_id = ${workspaceId}) as views,
        (select string_agg(x::text, '|' order by x::text) from schedules x where workspace_id = ${workspaceId}) as schedules,

        (select string_agg(x::text, '|' order by x::text) from destinations x where workspace_id = ${workspaceId}) as destinations`,
  );
  return JSON.stringify(row);
}

/** What of the victim must never appear in an answer to someone else. */
export function victimMarkers(f: Fixture): string[] {
  return [
    f.ws.id,
    f.ws.key,
    revokedKey,
    f.tag,
    f.tableId,
    f.rowId,
    f.workflowId,
    f.hookId,
    f.viewId,
    f.hookSecret,
    f.scheduleId,
    f.destinationId,
    f.destinationSecret,
    f.dispatchId,
    f.executionId,
    // Not the secret names: any workspace may pick the same one (the values carry the tag).
    "victim workspace",
  ];
}

/** Markers the request itself carried are echoed legitimately (a path id in a message). */
export function expectNoLeak(res: ApiResponse, sent: string): void {
  const text = typeof res.body === "string" ? res.body : JSON.stringify(res.body);
  const answer = `${text}\n${[...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join("\n")}`;
  for (const marker of victimMarkers(victim)) {
    if (marker === "" || sent.includes(marker)) continue;
    expect(answer, `the answer shows the victim's ${JSON.stringify(marker)}`).not.toContain(marker);
  }
}

export function expectError(res: ApiResponse, status: number, code: string, what: string): void {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(status);
  const parsed = ApiError.safeParse(res.body);
  expect(parsed.success, `${what}: not the error shape: ${JSON.stringify(res.body)}`).toBe(true);
  expect(parsed.data?.error.code, what).toBe(code);
  expect(res.headers.getSetCookie(), `${what} sets no cookie`).toEqual([]);
}

export interface Req {
  path: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

/** Credentials that open no workspace: each must be a 401 wherever a key is needed. */
export interface BadCredential {
  name: string;
  headers: () => Record<string, string>;
  /** Only requests that change something (the CSRF guard lets reads through). */
  writesOnly?: boolean;
}

export const BAD_CREDENTIALS: BadCredential[] = [
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
export const FOREIGN_CREDENTIALS: { name: string; headers: () => Record<string, string> }[] = [
  {
    name: "another workspace's key",
    headers: () => ({ authorization: `Bearer ${intruder.ws.key}` }),
  },
  {
    name: "another workspace's session cookie",
    headers: () => ({ ...cookie(intruder.ws.key), ...UI }),
  },
];

export function options(req: Req, headers: Record<string, string>): CallOptions {
  return {
    headers: { ...req.headers, ...headers },
    ...(req.rawBody !== undefined ? { rawBody: req.rawBody } : {}),
    ...(req.body !== undefined ? { body: req.body } : {}),
  };
}

export const sentText = (req: Req, headers: Record<string, string>) =>
  JSON.stringify([req.path, req.body ?? req.rawBody ?? null, headers]);

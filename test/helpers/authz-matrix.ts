/**
 * The authorization matrix: every route and method of the API, and how to call it with a
 * workspace's credentials (API.md "Conventions", docs/api.md "Sessions").
 */
import type { Fixture, Req } from "./authz-fixtures";

/**
 * A route called with a workspace's credentials. `target` names whose resources the path
 * and body point at. `scope`: "resource" routes name a resource (another workspace's →
 * 404); "own" routes act on the caller's own workspace whatever it is (list, create).
 * `ok` is what the owner gets with a valid key: the request is sound, only its
 * credentials decide.
 */
export interface KeyedSpec {
  kind: "keyed";
  scope: "resource" | "own";
  ok: number;
  request: (target: Fixture) => Req;
  /** The caller's own table with the target's other ids: a row, run, hook of someone else. */
  mixed?: (own: Fixture, target: Fixture) => Req;
}

export interface PublicSpec {
  kind: "public";
}

export const csv = (f: Fixture): Req => ({
  path: `/api/tables/${f.tableId}/import`,
  rawBody: "v\ncsv value\n",
  headers: { "content-type": "text/csv" },
});

export const MATRIX: Record<string, KeyedSpec | PublicSpec> = {
  "GET /api/health": { kind: "public" },
  "GET /api/metrics": { kind: "public" },
  "GET /api/openapi.json": { kind: "public" },
  "GET /api/docs": { kind: "public" },
  "POST /api/hooks/[hookId]": { kind: "public" },
  "POST /api/admin/workspaces": { kind: "public" },
  "PATCH /api/admin/workspaces/[id]": { kind: "public" },
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
  "GET /api/system": {
    kind: "keyed",
    scope: "own",
    ok: 200,
    request: () => ({ path: "/api/system" }),
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
  "GET /api/tables/[id]/views": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/views` }),
  },
  "POST /api/tables/[id]/views": {
    kind: "keyed",
    scope: "resource",
    ok: 201,
    request: (f) => ({ path: `/api/tables/${f.tableId}/views`, body: { name: "another" } }),
  },
  "PATCH /api/tables/[id]/views/[viewId]": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({
      path: `/api/tables/${f.tableId}/views/${f.viewId}`,
      body: { name: "renamed" },
    }),
    mixed: (own, t) => ({
      path: `/api/tables/${own.tableId}/views/${t.viewId}`,
      body: { name: "renamed" },
    }),
  },
  "DELETE /api/tables/[id]/views/[viewId]": {
    kind: "keyed",
    scope: "resource",
    ok: 204,
    request: (f) => ({ path: `/api/tables/${f.tableId}/views/${f.viewId}` }),
    mixed: (own, t) => ({ path: `/api/tables/${own.tableId}/views/${t.viewId}` }),
  },
  "GET /api/tables/[id]/schedules": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/schedules` }),
  },
  "POST /api/tables/[id]/schedules": {
    kind: "keyed",
    scope: "resource",
    ok: 201,
    request: (f) => ({
      path: `/api/tables/${f.tableId}/schedules`,
      body: { cron: "0 4 * * *", mode: "new", enabled: false },
    }),
  },
  "PATCH /api/tables/[id]/schedules/[scheduleId]": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({
      path: `/api/tables/${f.tableId}/schedules/${f.scheduleId}`,
      body: { cron: "0 5 * * *" },
    }),
    mixed: (own, t) => ({
      path: `/api/tables/${own.tableId}/schedules/${t.scheduleId}`,
      body: { cron: "0 5 * * *" },
    }),
  },
  "DELETE /api/tables/[id]/schedules/[scheduleId]": {
    kind: "keyed",
    scope: "resource",
    ok: 204,
    request: (f) => ({ path: `/api/tables/${f.tableId}/schedules/${f.scheduleId}` }),
    mixed: (own, t) => ({ path: `/api/tables/${own.tableId}/schedules/${t.scheduleId}` }),
  },
  "GET /api/tables/[id]/destinations": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/destinations` }),
  },
  "POST /api/tables/[id]/destinations": {
    kind: "keyed",
    scope: "resource",
    ok: 201,
    request: (f) => ({
      path: `/api/tables/${f.tableId}/destinations`,
      body: { url: "http://127.0.0.1:9/another" },
    }),
  },
  "PATCH /api/tables/[id]/destinations/[destinationId]": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({
      path: `/api/tables/${f.tableId}/destinations/${f.destinationId}`,
      body: { enabled: false },
    }),
    mixed: (own, t) => ({
      path: `/api/tables/${own.tableId}/destinations/${t.destinationId}`,
      body: { enabled: false },
    }),
  },
  "DELETE /api/tables/[id]/destinations/[destinationId]": {
    kind: "keyed",
    scope: "resource",
    ok: 204,
    request: (f) => ({ path: `/api/tables/${f.tableId}/destinations/${f.destinationId}` }),
    mixed: (own, t) => ({ path: `/api/tables/${own.tableId}/destinations/${t.destinationId}` }),
  },
  "GET /api/tables/[id]/destinations/[destinationId]/deliveries": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({
      path: `/api/tables/${f.tableId}/destinations/${f.destinationId}/deliveries`,
    }),
    mixed: (own, t) => ({
      path: `/api/tables/${own.tableId}/destinations/${t.destinationId}/deliveries?status=failed`,
    }),
  },
  "GET /api/tables/[id]/rows": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/rows` }),
    mixed: (own, t) => ({ path: `/api/tables/${own.tableId}/rows?view=${t.viewId}` }),
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
  "POST /api/tables/[id]/rows/delete": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({
      path: `/api/tables/${f.tableId}/rows/delete`,
      body: { where: [{ column: "v", op: "eq", value: "matches no row" }] },
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
  "GET /api/tables/[id]/rows/[rowId]/cells/[groupId]": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/rows/${f.rowId}/cells/g` }),
    mixed: (own, t) => ({ path: `/api/tables/${own.tableId}/rows/${t.rowId}/cells/g` }),
  },
  "GET /api/tables/[id]/rows/[rowId]/cells/[groupId]/attempts": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/rows/${f.rowId}/cells/g/attempts` }),
    mixed: (own, t) => ({ path: `/api/tables/${own.tableId}/rows/${t.rowId}/cells/g/attempts` }),
  },
  "GET /api/tables/[id]/progress": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/tables/${f.tableId}/progress` }),
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
  "GET /api/workflows/[id]/versions": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/workflows/${f.workflowId}/versions` }),
  },
  // The fixture's workflow is deployed once: version 1 exists.
  "GET /api/workflows/[id]/versions/[version]": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({ path: `/api/workflows/${f.workflowId}/versions/1` }),
  },
  "POST /api/workflows/[id]/test": {
    kind: "keyed",
    scope: "resource",
    ok: 200,
    request: (f) => ({
      path: `/api/workflows/${f.workflowId}/test`,
      body: { tableId: f.tableId, rowId: f.rowId, groupId: "g" },
    }),
    // The caller's own workflow on the other workspace's row.
    mixed: (own, t) => ({
      path: `/api/workflows/${own.workflowId}/test`,
      body: { tableId: t.tableId, rowId: t.rowId },
    }),
  },
};

export function keyedCases(): [string, string, KeyedSpec][] {
  return Object.entries(MATRIX).flatMap(([id, spec]) => {
    const [method = "", template = ""] = id.split(" ");
    return spec.kind === "keyed" ? [[method, template, spec] as [string, string, KeyedSpec]] : [];
  });
}

/**
 * The operations outside `/api/tables`: health, workspaces, sessions, workflows,
 * enrichments, usage, secrets, webhook deliveries and the description of the API itself.
 */
import { z } from "zod";
import { EnrichmentList } from "@/contracts/enrichments";
import { HealthView } from "@/contracts/health";
import { HookRowsInserted } from "@/contracts/hooks";
import { InsertRowsRequest } from "@/contracts/rows";
import { CreateRunRequest, RunRequestHeaders, RunStarted } from "@/contracts/runs";
import { PutSecretRequest, SecretList, SecretView } from "@/contracts/secrets";
import { SessionView, SignInRequest } from "@/contracts/session";
import { SystemView } from "@/contracts/system";
import {
  CreateWorkflowRequest,
  DeployedWorkflow,
  DeployWorkflowRequest,
  UpdateWorkflowRequest,
  WorkflowList,
  WorkflowVersionList,
  WorkflowVersionView,
  WorkflowView,
} from "@/contracts/workflow";
import { TestWorkflowRequest, TestWorkflowResponse } from "@/contracts/workflow-test";
import {
  CreatedWorkspace,
  CreateWorkspaceRequest,
  UpdateWorkspaceRequest,
  UsageView,
  WorkspaceView,
} from "@/contracts/workspaces";
import type { Operation } from "./operation";

const SET_COOKIE = { "set-cookie": "The session cookie (`cellflow_session`, HttpOnly)" };

const service: Operation[] = [
  {
    method: "get",
    path: "/api/health",
    operationId: "health",
    tag: "Service",
    summary: "Whether the server and its database answer",
    access: "public",
    answers: [
      { status: 200, description: "Healthy", json: HealthView },
      { status: 503, description: "The database does not answer", json: HealthView },
    ],
  },
  {
    method: "post",
    path: "/api/admin/workspaces",
    operationId: "createWorkspace",
    tag: "Service",
    summary: "Create a workspace and its first API key (shown once)",
    description:
      "Needs `Authorization: Bearer <CELLFLOW_ADMIN_TOKEN>`; without that token configured the route does not exist (404). `plan` defaults to `free`.",
    access: "admin",
    body: { json: CreateWorkspaceRequest },
    answers: [{ status: 201, description: "The workspace and its key", json: CreatedWorkspace }],
    errors: [401, 404],
  },
  {
    method: "patch",
    path: "/api/admin/workspaces/{id}",
    operationId: "updateWorkspace",
    tag: "Service",
    summary: "Move a workspace to another plan",
    description:
      "Needs `Authorization: Bearer <CELLFLOW_ADMIN_TOKEN>`; without that token configured the route does not exist (404). An unknown workspace → 404. The plan holds from the workspace's next claimed cell (the month's credits, the provider rate) and its next run (the window); rows already being carried keep the deadlines they started with.",
    access: "admin",
    params: { id: "The workspace's id" },
    body: { json: UpdateWorkspaceRequest },
    answers: [{ status: 200, description: "The workspace", json: WorkspaceView }],
    errors: [401],
  },
  {
    method: "get",
    path: "/api/metrics",
    operationId: "metrics",
    tag: "Service",
    summary: "Prometheus metrics of the whole deployment",
    description:
      "The Prometheus text format (0.0.4). Needs `Authorization: Bearer <CELLFLOW_METRICS_TOKEN>`, or the admin token when no metrics token is set; with neither configured the route does not exist (404). Carries `cellflow_cells{status}`, `cellflow_queue_depth`, `cellflow_carriers_running`, `cellflow_stamp_to_running_seconds`, `cellflow_cell_duration_seconds{kind,end}`, `cellflow_provider_calls_total{provider,outcome}`, `cellflow_rate_limit_wait_seconds{provider}`, `cellflow_credits_total{source}`, `cellflow_processes{kind}` and the Node process metrics, summed over every process of the deployment (each flushes its series to Postgres every 10 s).",
    access: "metrics",
    answers: [{ status: 200, description: "The metrics", text: "text/plain" }],
    errors: [401, 404],
  },
  {
    method: "get",
    path: "/api/openapi.json",
    operationId: "openapiDocument",
    tag: "Service",
    summary: "This document (OpenAPI 3.1)",
    access: "public",
    answers: [
      {
        status: 200,
        description: "The OpenAPI document",
        json: z.looseObject({ openapi: z.string() }),
      },
    ],
  },
  {
    method: "get",
    path: "/api/docs",
    operationId: "apiDocs",
    tag: "Service",
    summary: "A reference page rendering this document",
    access: "public",
    answers: [{ status: 200, description: "The reference page", text: "text/html" }],
  },
];

const session: Operation[] = [
  {
    method: "post",
    path: "/api/session",
    operationId: "signIn",
    tag: "Sessions",
    summary: "Sign the web UI in with an API key (sets the session cookie)",
    description:
      "The request must be `Content-Type: application/json` or carry `x-cellflow-ui: 1`. A wrong, revoked or malformed key → 401 and no cookie.",
    access: "public",
    body: { json: SignInRequest },
    answers: [{ status: 200, description: "Signed in", json: SessionView, headers: SET_COOKIE }],
    errors: [401],
  },
  {
    method: "get",
    path: "/api/session",
    operationId: "getSession",
    tag: "Sessions",
    summary: "The workspace of the key or session cookie",
    access: "key",
    answers: [{ status: 200, description: "The workspace", json: SessionView }],
  },
  {
    method: "delete",
    path: "/api/session",
    operationId: "signOut",
    tag: "Sessions",
    summary: "Sign out (clears the cookie; the key stays valid)",
    access: "public",
    answers: [{ status: 204, description: "Signed out", headers: SET_COOKIE }],
  },
];

const WORKFLOW = { id: "The workflow's id" };

const workflows: Operation[] = [
  {
    method: "get",
    path: "/api/workflows",
    operationId: "listWorkflows",
    tag: "Workflows",
    summary: "List the workspace's workflows (oldest first)",
    access: "key",
    answers: [{ status: 200, description: "The workflows", json: WorkflowList }],
  },
  {
    method: "post",
    path: "/api/workflows",
    operationId: "createWorkflow",
    tag: "Workflows",
    summary: "Create a workflow",
    description: "A cycle, an unknown block type or a dangling `next` → 400 with issues.",
    access: "key",
    body: { json: CreateWorkflowRequest },
    answers: [{ status: 201, description: "The workflow", json: WorkflowView }],
  },
  {
    method: "get",
    path: "/api/workflows/{id}",
    operationId: "getWorkflow",
    tag: "Workflows",
    summary: "Get a workflow",
    access: "key",
    params: WORKFLOW,
    answers: [{ status: 200, description: "The workflow", json: WorkflowView }],
  },
  {
    method: "put",
    path: "/api/workflows/{id}",
    operationId: "updateWorkflow",
    tag: "Workflows",
    summary: "Edit a workflow's draft",
    access: "key",
    params: WORKFLOW,
    body: { json: UpdateWorkflowRequest },
    answers: [{ status: 200, description: "The workflow", json: WorkflowView }],
  },
  {
    method: "post",
    path: "/api/workflows/{id}/deploy",
    operationId: "deployWorkflow",
    tag: "Workflows",
    summary: "Freeze the current draft (or a copy of an earlier version) as a new deployed version",
    description:
      "No body (or `{}`): the draft becomes the next version. `version`: a copy of that deployed version becomes the next version, with `rolledBackFrom` set to it (a rollback); the draft is left as it is. Groups on `deployed` run the new version from their next cell. Concurrent deploys get distinct, gapless versions. 404: the workflow or the version.",
    access: "key",
    params: WORKFLOW,
    body: { json: DeployWorkflowRequest, optional: true },
    answers: [{ status: 201, description: "The version deployed", json: DeployedWorkflow }],
  },
  {
    method: "get",
    path: "/api/workflows/{id}/versions",
    operationId: "listWorkflowVersions",
    tag: "Workflows",
    summary: "The workflow's deployed versions (newest first)",
    description:
      "Each deploy is kept. `rolledBackFrom`: the version a rollback copied, else null. Empty before the first deploy.",
    access: "key",
    params: WORKFLOW,
    answers: [{ status: 200, description: "The versions", json: WorkflowVersionList }],
  },
  {
    method: "get",
    path: "/api/workflows/{id}/versions/{version}",
    operationId: "getWorkflowVersion",
    tag: "Workflows",
    summary: "One deployed version with its definition",
    access: "key",
    params: { ...WORKFLOW, version: "The version's number (from 1)" },
    answers: [{ status: 200, description: "The version", json: WorkflowVersionView }],
  },
  {
    method: "post",
    path: "/api/workflows/{id}/test",
    operationId: "testWorkflow",
    tag: "Workflows",
    summary: "Run a workflow once, now, writing no cell",
    description:
      "Runs the draft (or `version`: `live` or a deployed version's number, or an unsaved `definition`; with a group and no version, the version the group runs) on `inputs`, or on a row (`tableId` + `rowId`; with `groupId`, the row's values through that group's input mapping, `inputs` overriding them; `row` by column names). Effects happen (http calls are made). A definition with paid blocks (a priced enrichment or llm model, in it or in a sub-workflow it names) needs `allowPaid: true` and is charged under the month's credits. A pause (approval, long wait) ends the test with `paused`; past CELLFLOW_TEST_RUN_TIMEOUT_MS (60 s) the run is stopped and answers `error`. `blocks`: every block that started, in start order (`cancelled`: still running when the test ended). 400: `definition` and `version` together, `rowId` without `tableId` (or the reverse), `groupId` not a workflow group of this workflow, paid blocks without `allowPaid`, an invalid definition. 404: the workflow, table, row, group or version.",
    access: "key",
    params: WORKFLOW,
    body: { json: TestWorkflowRequest },
    answers: [{ status: 200, description: "What the run did", json: TestWorkflowResponse }],
  },
];

const SECRET = { name: "The secret's name (`^[A-Z][A-Z0-9_]{0,63}$`)" };

const workspace: Operation[] = [
  {
    method: "get",
    path: "/api/enrichments",
    operationId: "listEnrichments",
    tag: "Enrichments",
    summary: "The enrichments groups and blocks can use",
    access: "key",
    answers: [{ status: 200, description: "The enrichments", json: EnrichmentList }],
  },
  {
    method: "get",
    path: "/api/usage",
    operationId: "getUsage",
    tag: "Usage",
    summary:
      "This month's credits (used, the plan's limit, what remains, by source) and the plan's limits",
    access: "key",
    answers: [{ status: 200, description: "The usage", json: UsageView }],
    errors: [404],
  },
  {
    method: "get",
    path: "/api/system",
    operationId: "getSystem",
    tag: "Usage",
    summary:
      "What the app's System page shows: active runs with rate and ETA, queue depth, carriers, stamp → running p50/p99, providers' calls, refusals and waits, this month's credits by source, the 20 newest cell errors",
    description:
      "Runs, queue, carriers, credits and errors are the key's workspace's; `stampToRunning` and `providers` are the deployment's metric series (`scope: \"deployment\"`).",
    access: "key",
    answers: [{ status: 200, description: "The workspace's system view", json: SystemView }],
    errors: [404],
  },
  {
    method: "get",
    path: "/api/secrets",
    operationId: "listSecrets",
    tag: "Secrets",
    summary: "List the workspace's secrets (names only, never values)",
    access: "key",
    answers: [{ status: 200, description: "The secrets", json: SecretList }],
  },
  {
    method: "put",
    path: "/api/secrets/{name}",
    operationId: "putSecret",
    tag: "Secrets",
    summary: "Create or replace a secret",
    description: "A name outside the pattern → 400 with an issue at `name`.",
    access: "key",
    params: SECRET,
    body: { json: PutSecretRequest },
    answers: [{ status: 200, description: "The secret (without its value)", json: SecretView }],
  },
  {
    method: "delete",
    path: "/api/secrets/{name}",
    operationId: "deleteSecret",
    tag: "Secrets",
    summary: "Delete a secret",
    access: "key",
    params: SECRET,
    answers: [{ status: 204, description: "Deleted" }],
  },
  {
    method: "post",
    path: "/api/hooks/{hookId}",
    operationId: "deliverHook",
    tag: "Webhooks",
    summary: "Deliver a signed request to a webhook",
    description:
      'Signed with `Cellflow-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`. An `insert_rows` hook takes the body of `POST /rows`, a `run` hook the body of `POST /runs`. A bad or missing signature, or `t` more than 300 s away → 401. A replay gets the first answer back with `Cellflow-Replayed: true`; a `run` copy arriving while the first is still starting → 409. A `run` hook honours an `Idempotency-Key` as `POST /runs` does (the same keys, per table): a copy signed again with a new `t` but the same key answers the run the key started; an `insert_rows` hook ignores it. An `insert_rows` delivery whose rows would take the table past its plan\'s rows per table → 402 `limit_reached`, none of them kept (and not recorded: the same delivery may be sent again once there is room).',
    access: "signed",
    params: { hookId: "The hook's id" },
    headers: RunRequestHeaders,
    body: { json: z.union([InsertRowsRequest, CreateRunRequest]) },
    answers: [
      {
        status: 202,
        description: "Accepted: the rows inserted, or the run started",
        json: z.union([HookRowsInserted, RunStarted]),
        headers: { "cellflow-replayed": "`true` when this answers a replay" },
      },
    ],
    errors: [401, 402, 409],
  },
];

export const WORKSPACE_OPERATIONS: Operation[] = [
  ...service,
  ...session,
  ...workflows,
  ...workspace,
];

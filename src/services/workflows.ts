import type { Issue } from "@/contracts/common";
import {
  type CreateWorkflowRequest,
  type DeployedWorkflow,
  type DeployWorkflowRequest,
  type UpdateWorkflowRequest,
  WorkflowDefinition,
  type WorkflowList,
  type WorkflowVersionList,
  type WorkflowVersionView,
  type WorkflowView,
} from "@/contracts/workflow";
import { type Failure, invalid, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { checkWorkflowDefinition } from "@/domain/workflow-graph";
import { createWorkflow as insertWorkflow } from "@/store/workflows/create";
import { deployWorkflow as freezeDraft } from "@/store/workflows/deploy";
import {
  getWorkflow as readWorkflow,
  listWorkflows as readWorkflows,
  type WorkflowRecord,
} from "@/store/workflows/read";
import { rollbackWorkflow } from "@/store/workflows/rollback";
import { updateWorkflow as writeDraft } from "@/store/workflows/update";
import {
  listWorkflowVersions as readVersions,
  readWorkflowVersion,
  type VersionRecord,
} from "@/store/workflows/versions";
import type { ServiceContext } from "./context";

function view(r: WorkflowRecord): WorkflowView {
  return {
    id: r.id,
    name: r.name,
    definition: WorkflowDefinition.parse(r.definition),
    deployedVersion: r.deployedVersion,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

function definitionIssues(def: WorkflowDefinition): Issue[] {
  return checkWorkflowDefinition(def).map((i) => ({ ...i, path: `definition.${i.path}` }));
}

export async function createWorkflow(
  ctx: ServiceContext,
  req: CreateWorkflowRequest,
): Promise<Result<WorkflowView, Failure>> {
  const issues = definitionIssues(req.definition);
  if (issues.length > 0)
    return { ok: false, reason: invalid(issues, "The workflow definition is not valid") };
  const row = await insertWorkflow(ctx.db, ctx.workspaceId, req);
  ctx.log.info({ workflowId: row.id }, "workflow created");
  return { ok: true, value: view(row) };
}

export async function getWorkflow(
  ctx: ServiceContext,
  id: string,
): Promise<Result<WorkflowView, Failure>> {
  const row = await readWorkflow(ctx.db, ctx.workspaceId, id);
  return row ? { ok: true, value: view(row) } : { ok: false, reason: notFound("workflow") };
}

export async function updateWorkflow(
  ctx: ServiceContext,
  id: string,
  req: UpdateWorkflowRequest,
): Promise<Result<WorkflowView, Failure>> {
  if (req.definition) {
    const issues = definitionIssues(req.definition);
    if (issues.length > 0)
      return { ok: false, reason: invalid(issues, "The workflow definition is not valid") };
  }
  const row = await writeDraft(ctx.db, {
    workspaceId: ctx.workspaceId,
    workflowId: id,
    patch: req,
  });
  return row ? { ok: true, value: view(row) } : { ok: false, reason: notFound("workflow") };
}

/**
 * Without a version: freezes the draft as the next version. With one: deploys a copy of
 * that version as the next (`rolledBackFrom`); the draft is not touched, so a rollback
 * changes what groups on "deployed" run and keeps the edits in progress.
 */
export async function deployWorkflow(
  ctx: ServiceContext,
  id: string,
  req: DeployWorkflowRequest = {},
): Promise<Result<DeployedWorkflow, Failure>> {
  const target = { workspaceId: ctx.workspaceId, workflowId: id };
  const deployed =
    req.version === undefined
      ? await freezeDraft(ctx.db, target)
      : await rollbackWorkflow(ctx.db, { ...target, version: req.version });
  if (!deployed) {
    // Nothing written: name what is missing (the workflow, or only the version).
    const known = req.version !== undefined && (await readWorkflow(ctx.db, ctx.workspaceId, id));
    return { ok: false, reason: notFound(known ? "workflow version" : "workflow") };
  }
  ctx.log.info(
    { workflowId: id, version: deployed.version, rolledBackFrom: deployed.rolledBackFrom },
    deployed.rolledBackFrom === null ? "workflow deployed" : "workflow rolled back",
  );
  return { ok: true, value: deployed };
}

function versionSummary(r: VersionRecord) {
  return {
    version: r.version,
    deployedAt: r.deployedAt.toISOString(),
    rolledBackFrom: r.rolledBackFrom,
  };
}

export async function listWorkflowVersions(
  ctx: ServiceContext,
  id: string,
): Promise<Result<WorkflowVersionList, Failure>> {
  const rows = await readVersions(ctx.db, ctx.workspaceId, id);
  return rows
    ? { ok: true, value: { versions: rows.map(versionSummary) } }
    : { ok: false, reason: notFound("workflow") };
}

/** `version`: the path's text; anything but a version number cannot exist (404). */
export async function getWorkflowVersion(
  ctx: ServiceContext,
  id: string,
  version: string,
): Promise<Result<WorkflowVersionView, Failure>> {
  const n = /^[1-9][0-9]{0,8}$/.test(version) ? Number(version) : null;
  const row = n === null ? null : await readWorkflowVersion(ctx.db, ctx.workspaceId, id, n);
  if (!row) return { ok: false, reason: notFound("workflow version") };
  return {
    ok: true,
    value: { ...versionSummary(row), definition: WorkflowDefinition.parse(row.definition) },
  };
}

export async function listWorkflows(ctx: ServiceContext): Promise<Result<WorkflowList, Failure>> {
  const rows = await readWorkflows(ctx.db, ctx.workspaceId);
  return { ok: true, value: { workflows: rows.map(view) } };
}

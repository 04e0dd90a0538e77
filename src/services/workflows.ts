import type { Issue } from "@/contracts/common";
import {
  type CreateWorkflowRequest,
  type DeployedWorkflow,
  type UpdateWorkflowRequest,
  WorkflowDefinition,
  type WorkflowList,
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
import { updateWorkflow as writeDraft } from "@/store/workflows/update";
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

export async function deployWorkflow(
  ctx: ServiceContext,
  id: string,
): Promise<Result<DeployedWorkflow, Failure>> {
  const deployed = await freezeDraft(ctx.db, { workspaceId: ctx.workspaceId, workflowId: id });
  if (!deployed) return { ok: false, reason: notFound("workflow") };
  ctx.log.info({ workflowId: id, version: deployed.version }, "workflow deployed");
  return { ok: true, value: deployed };
}

export async function listWorkflows(ctx: ServiceContext): Promise<Result<WorkflowList, Failure>> {
  const rows = await readWorkflows(ctx.db, ctx.workspaceId);
  return { ok: true, value: { workflows: rows.map(view) } };
}

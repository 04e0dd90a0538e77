import { CreateWorkflowRequest } from "@/contracts/workflow";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { createWorkflow, listWorkflows } from "@/services/workflows";

export const GET = workspaceRoute(async (_req, ctx) => respond(await listWorkflows(ctx)));

export const POST = workspaceRoute(async (req, ctx) => {
  const body = await parseJsonBody(req, CreateWorkflowRequest);
  return respond(await createWorkflow(ctx, body), 201);
});

import { UpdateWorkflowRequest } from "@/contracts/workflow";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { getWorkflow, updateWorkflow } from "@/services/workflows";

export const GET = workspaceRoute<{ id: string }>(async (_req, ctx, { id }) =>
  respond(await getWorkflow(ctx, id)),
);

export const PUT = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const body = await parseJsonBody(req, UpdateWorkflowRequest);
  return respond(await updateWorkflow(ctx, id, body));
});

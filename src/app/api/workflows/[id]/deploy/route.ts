import { DeployWorkflowRequest } from "@/contracts/workflow";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { deployWorkflow } from "@/services/workflows";

export const POST = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  // No body deploys the draft, as before the body existed.
  const body = await parseJsonBody(req, DeployWorkflowRequest, { empty: {} });
  return respond(await deployWorkflow(ctx, id, body), 201);
});

import { TestWorkflowRequest } from "@/contracts/workflow-test";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { testWorkflow } from "@/services/workflow-test";

export const POST = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const body = await parseJsonBody(req, TestWorkflowRequest);
  return respond(await testWorkflow(ctx, id, body, req.signal));
});

import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { deployWorkflow } from "@/services/workflows";

export const POST = workspaceRoute<{ id: string }>(async (_req, ctx, { id }) =>
  respond(await deployWorkflow(ctx, id), 201),
);

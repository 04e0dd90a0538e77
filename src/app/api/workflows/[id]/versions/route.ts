import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { listWorkflowVersions } from "@/services/workflows";

export const GET = workspaceRoute<{ id: string }>(async (_req, ctx, { id }) =>
  respond(await listWorkflowVersions(ctx, id)),
);

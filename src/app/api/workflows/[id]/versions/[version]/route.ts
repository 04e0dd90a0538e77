import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { getWorkflowVersion } from "@/services/workflows";

export const GET = workspaceRoute<{ id: string; version: string }>(
  async (_req, ctx, { id, version }) => respond(await getWorkflowVersion(ctx, id, version)),
);

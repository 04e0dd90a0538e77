import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { getRun } from "@/services/runs";

export const GET = workspaceRoute<{ id: string; dispatchId: string }>(
  async (_req, ctx, { id, dispatchId }) => respond(await getRun(ctx, id, dispatchId)),
);

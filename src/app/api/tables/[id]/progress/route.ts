import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { getProgress } from "@/services/progress";

export const GET = workspaceRoute<{ id: string }>(async (_req, ctx, { id }) =>
  respond(await getProgress(ctx, id)),
);

import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { revokeHook } from "@/services/hooks";

export const DELETE = workspaceRoute<{ id: string; hookId: string }>(
  async (_req, ctx, { id, hookId }) => respond(await revokeHook(ctx, id, hookId), 204),
);

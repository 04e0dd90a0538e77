import { PatchViewRequest } from "@/contracts/views";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { deleteView, patchView } from "@/services/views";

export const PATCH = workspaceRoute<{ id: string; viewId: string }>(
  async (req, ctx, { id, viewId }) => {
    const body = await parseJsonBody(req, PatchViewRequest);
    return respond(await patchView(ctx, id, viewId, body));
  },
);

export const DELETE = workspaceRoute<{ id: string; viewId: string }>(
  async (_req, ctx, { id, viewId }) => respond(await deleteView(ctx, id, viewId), 204),
);

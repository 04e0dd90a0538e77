import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { listCellAttempts } from "@/services/cells";

/** A cell's attempt history, newest first. */
export const GET = workspaceRoute<{ id: string; rowId: string; groupId: string }>(
  async (_req, ctx, { id, rowId, groupId }) =>
    respond(await listCellAttempts(ctx, { tableId: id, rowId, groupId })),
);

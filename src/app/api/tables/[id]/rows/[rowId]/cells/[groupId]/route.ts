import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { getCell } from "@/services/cells";

/** One cell with its details. */
export const GET = workspaceRoute<{ id: string; rowId: string; groupId: string }>(
  async (_req, ctx, { id, rowId, groupId }) =>
    respond(await getCell(ctx, { tableId: id, rowId, groupId })),
);

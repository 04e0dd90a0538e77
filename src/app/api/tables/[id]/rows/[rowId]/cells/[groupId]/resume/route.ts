import { ResumeCellRequest } from "@/contracts/cells";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { resumePausedCell } from "@/services/cells";

/** Resumes a paused cell (an approval) with the data its block outputs. */
export const POST = workspaceRoute<{ id: string; rowId: string; groupId: string }>(
  async (req, ctx, { id, rowId, groupId }) => {
    const body = await parseJsonBody(req, ResumeCellRequest);
    return respond(await resumePausedCell(ctx, { tableId: id, rowId, groupId }, body), 202);
  },
);

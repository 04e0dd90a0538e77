import { DeleteRowsRequest } from "@/contracts/rows";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { deleteRows } from "@/services/row-bulk-delete";

/** Bulk delete; not atomic across its batches of 5,000 rows (services/row-bulk-delete.ts). */
export const POST = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const body = await parseJsonBody(req, DeleteRowsRequest);
  return respond(await deleteRows(ctx, id, body));
});

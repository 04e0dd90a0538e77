import { PatchRowRequest } from "@/contracts/rows";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { deleteRow, getRow, patchRow } from "@/services/rows";

type Params = { id: string; rowId: string };

export const GET = workspaceRoute<Params>(async (_req, ctx, { id, rowId }) =>
  respond(await getRow(ctx, id, rowId)),
);

export const PATCH = workspaceRoute<Params>(async (req, ctx, { id, rowId }) => {
  const body = await parseJsonBody(req, PatchRowRequest);
  return respond(await patchRow(ctx, id, rowId, body));
});

export const DELETE = workspaceRoute<Params>(async (_req, ctx, { id, rowId }) =>
  respond(await deleteRow(ctx, id, rowId), 204),
);

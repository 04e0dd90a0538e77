import { PatchTableRequest } from "@/contracts/table";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { deleteTable, getTable, patchTable } from "@/services/tables";

export const GET = workspaceRoute<{ id: string }>(async (_req, ctx, { id }) =>
  respond(await getTable(ctx, id)),
);

export const PATCH = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const body = await parseJsonBody(req, PatchTableRequest);
  return respond(await patchTable(ctx, id, body));
});

/** Stops the table's in-flight cells, then deletes it with its rows, cells, runs and hooks. */
export const DELETE = workspaceRoute<{ id: string }>(async (_req, ctx, { id }) =>
  respond(await deleteTable(ctx, id), 204),
);

import { InsertRowsRequest, LIST_ROWS_JSON_PARAMS, ListRowsQuery } from "@/contracts/rows";
import { parseJsonBody, parseQuery } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { insertRows, listRows } from "@/services/rows";

export const GET = workspaceRoute<{ id: string }>(async (req, ctx, { id }) =>
  respond(await listRows(ctx, id, parseQuery(req, ListRowsQuery, LIST_ROWS_JSON_PARAMS))),
);

export const POST = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const body = await parseJsonBody(req, InsertRowsRequest);
  return respond(await insertRows(ctx, id, body), 201);
});

import { CreateTableRequest } from "@/contracts/table";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { createTable, listTables } from "@/services/tables";

export const GET = workspaceRoute(async (_req, ctx) => respond(await listTables(ctx)));

export const POST = workspaceRoute(async (req, ctx) => {
  const body = await parseJsonBody(req, CreateTableRequest);
  return respond(await createTable(ctx, body), 201);
});

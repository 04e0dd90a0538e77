import { CreateViewRequest } from "@/contracts/views";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { createView, listViews } from "@/services/views";

export const GET = workspaceRoute<{ id: string }>(async (_req, ctx, { id }) =>
  respond(await listViews(ctx, id)),
);

export const POST = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const body = await parseJsonBody(req, CreateViewRequest);
  return respond(await createView(ctx, id, body), 201);
});

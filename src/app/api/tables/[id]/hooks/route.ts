import { CreateHookRequest } from "@/contracts/hooks";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { createHook, listHooks } from "@/services/hooks";

export const GET = workspaceRoute<{ id: string }>(async (_req, ctx, { id }) =>
  respond(await listHooks(ctx, id)),
);

export const POST = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const body = await parseJsonBody(req, CreateHookRequest);
  return respond(await createHook(ctx, id, body), 201);
});

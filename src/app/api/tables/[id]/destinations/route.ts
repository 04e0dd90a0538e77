import { CreateDestinationRequest } from "@/contracts/destinations";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { createDestination, listDestinations } from "@/services/destinations";

export const GET = workspaceRoute<{ id: string }>(async (_req, ctx, { id }) =>
  respond(await listDestinations(ctx, id)),
);

export const POST = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const body = await parseJsonBody(req, CreateDestinationRequest);
  return respond(await createDestination(ctx, id, body), 201);
});

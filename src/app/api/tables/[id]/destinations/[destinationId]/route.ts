import { PatchDestinationRequest } from "@/contracts/destinations";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { deleteDestination, setEnabled } from "@/services/destinations";

type Params = { id: string; destinationId: string };

export const PATCH = workspaceRoute<Params>(async (req, ctx, { id, destinationId }) => {
  const body = await parseJsonBody(req, PatchDestinationRequest);
  return respond(await setEnabled(ctx, id, destinationId, body.enabled));
});

export const DELETE = workspaceRoute<Params>(async (_req, ctx, { id, destinationId }) =>
  respond(await deleteDestination(ctx, id, destinationId), 204),
);

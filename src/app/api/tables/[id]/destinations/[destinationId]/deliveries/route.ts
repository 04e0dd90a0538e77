import { ListDeliveriesQuery } from "@/contracts/destinations";
import { parseQuery } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { listDeliveries } from "@/services/destinations";

export const GET = workspaceRoute<{ id: string; destinationId: string }>(
  async (req, ctx, { id, destinationId }) =>
    respond(await listDeliveries(ctx, id, destinationId, parseQuery(req, ListDeliveriesQuery))),
);

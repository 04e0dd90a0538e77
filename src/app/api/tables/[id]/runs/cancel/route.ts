import { CancelRunsRequest } from "@/contracts/runs";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { cancelRuns } from "@/services/runs";

/** An empty body stops everything in flight in the table. */
export const POST = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const body = await parseJsonBody(req, CancelRunsRequest, { empty: {} });
  return respond(await cancelRuns(ctx, id, body));
});

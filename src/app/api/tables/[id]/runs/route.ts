import { CreateRunRequest } from "@/contracts/runs";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { estimateRun } from "@/services/run-estimate";
import { createRun, listRuns } from "@/services/runs";

export const GET = workspaceRoute<{ id: string }>(async (_req, ctx, { id }) =>
  respond(await listRuns(ctx, id)),
);

export const POST = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const body = await parseJsonBody(req, CreateRunRequest);
  if (body.dryRun) return respond(await estimateRun(ctx, id, body));
  return respond(await createRun(ctx, id, body), 202);
});

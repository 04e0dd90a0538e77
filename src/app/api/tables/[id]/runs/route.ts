import { CreateRunRequest } from "@/contracts/runs";
import { IDEMPOTENCY_KEY_HEADER, idempotencyKeyOf } from "@/domain/idempotency-key";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { failureResponse, json, respond } from "@/http/respond";
import { estimateRun } from "@/services/run-estimate";
import { createRun, listRuns } from "@/services/runs";

export const GET = workspaceRoute<{ id: string }>(async (_req, ctx, { id }) =>
  respond(await listRuns(ctx, id)),
);

export const POST = workspaceRoute<{ id: string }>(async (req, ctx, { id }) => {
  const key = idempotencyKeyOf(req.headers.get(IDEMPOTENCY_KEY_HEADER));
  if (!key.ok) return failureResponse(key.reason);
  const body = await parseJsonBody(req, CreateRunRequest);
  // A dry run stamps nothing, so its key is neither recorded nor looked up.
  if (body.dryRun) return respond(await estimateRun(ctx, id, body));
  const started = await createRun(ctx, id, body, key.value);
  if (!started.ok) return failureResponse(started.reason);
  const { run, replayed } = started.value;
  return json(run, 202, replayed ? { "cellflow-replayed": "true" } : {});
});

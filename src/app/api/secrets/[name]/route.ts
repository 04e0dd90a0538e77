import { PutSecretRequest } from "@/contracts/secrets";
import { parseJsonBody } from "@/http/body";
import { workspaceRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { deleteSecret, putSecret } from "@/services/secrets";

export const PUT = workspaceRoute<{ name: string }>(async (req, ctx, { name }) => {
  const body = await parseJsonBody(req, PutSecretRequest);
  return respond(await putSecret(ctx, name, body));
});

export const DELETE = workspaceRoute<{ name: string }>(async (_req, ctx, { name }) =>
  respond(await deleteSecret(ctx, name), 204),
);

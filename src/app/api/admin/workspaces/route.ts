import { readEnv } from "@/config/env";
import { CreateWorkspaceRequest } from "@/contracts/workspaces";
import { RequestError } from "@/domain/errors";
import { bearerToken, sameSecret } from "@/http/auth";
import { parseJsonBody } from "@/http/body";
import { publicRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { createWorkspaceWithKey } from "@/services/admin";

export const POST = publicRoute(async (req, _params, sys) => {
  const adminToken = readEnv().CELLFLOW_ADMIN_TOKEN;
  // Without an admin token configured the route does not exist.
  if (!adminToken) throw new RequestError("not_found", "Not found");
  const given = bearerToken(req);
  if (!given || !sameSecret(given, adminToken))
    throw new RequestError("unauthorized", "The admin token is not valid");
  const body = await parseJsonBody(req, CreateWorkspaceRequest);
  return respond(await createWorkspaceWithKey(sys.db, body.name), 201);
});

import { CreateWorkspaceRequest } from "@/contracts/workspaces";
import { requireAdmin } from "@/http/auth";
import { parseJsonBody } from "@/http/body";
import { publicRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { createWorkspaceWithKey } from "@/services/admin";

export const POST = publicRoute(async (req, _params, sys) => {
  requireAdmin(req);
  const body = await parseJsonBody(req, CreateWorkspaceRequest);
  return respond(await createWorkspaceWithKey(sys.db, body.name, body.plan), 201);
});

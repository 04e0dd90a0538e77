import { UpdateWorkspaceRequest } from "@/contracts/workspaces";
import { requireAdmin } from "@/http/auth";
import { parseJsonBody } from "@/http/body";
import { publicRoute } from "@/http/handler";
import { respond } from "@/http/respond";
import { changeWorkspacePlan } from "@/services/admin";

export const PATCH = publicRoute<{ id: string }>(async (req, { id }, sys) => {
  requireAdmin(req);
  const body = await parseJsonBody(req, UpdateWorkspaceRequest);
  return respond(await changeWorkspacePlan(sys, id, body.plan));
});

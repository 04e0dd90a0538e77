import type { Db } from "@db/client";
import type { CreatedWorkspace, WorkspaceView } from "@/contracts/workspaces";
import { type Failure, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import type { Plan } from "@/domain/statuses";
import { generateApiKey } from "@/store/api-keys/keys";
import { registerApiKey } from "@/store/api-keys/register";
import { createWorkspace } from "@/store/workspaces/create";
import { setWorkspacePlan } from "@/store/workspaces/set-plan";
import type { ServiceContext } from "./context";

/** A workspace and its first API key; the key is returned once and stored only hashed. */
export async function createWorkspaceWithKey(
  db: Db,
  name: string,
  plan?: Plan,
): Promise<Result<CreatedWorkspace, never>> {
  return db.transaction(async (tx) => {
    const ws = await createWorkspace(tx, name, plan);
    const apiKey = generateApiKey();
    const registered = await registerApiKey(tx, {
      workspaceId: ws.id,
      key: apiKey,
      label: "created with the workspace",
    });
    if (!registered.ok) throw new Error("a freshly generated API key collided");
    return { ok: true, value: { id: ws.id, name: ws.name, apiKey, plan: ws.plan } };
  });
}

/**
 * Moves a workspace to another plan. It holds from the workspace's next claimed cell (the
 * month's credits and the provider rate) and its next run (the window); a row already
 * carried keeps the deadlines it started with.
 */
export async function changeWorkspacePlan(
  ctx: Pick<ServiceContext, "db" | "log">,
  workspaceId: string,
  plan: Plan,
): Promise<Result<WorkspaceView, Failure>> {
  const changed = await setWorkspacePlan(ctx.db, { workspaceId, plan });
  if (!changed.ok) return { ok: false, reason: notFound("workspace") };
  ctx.log.info({ workspaceId, plan }, "workspace plan changed");
  const { id, name } = changed.value;
  return { ok: true, value: { id, name, plan } };
}

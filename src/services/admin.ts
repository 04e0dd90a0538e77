import type { Db } from "@db/client";
import type { CreatedWorkspace } from "@/contracts/workspaces";
import type { Result } from "@/domain/result";
import { generateApiKey } from "@/store/api-keys/keys";
import { registerApiKey } from "@/store/api-keys/register";
import { createWorkspace } from "@/store/workspaces/create";

/** A workspace and its first API key; the key is returned once and stored only hashed. */
export async function createWorkspaceWithKey(
  db: Db,
  name: string,
): Promise<Result<CreatedWorkspace, never>> {
  return db.transaction(async (tx) => {
    const ws = await createWorkspace(tx, name);
    const apiKey = generateApiKey();
    const registered = await registerApiKey(tx, {
      workspaceId: ws.id,
      key: apiKey,
      label: "created with the workspace",
    });
    if (!registered.ok) throw new Error("a freshly generated API key collided");
    return { ok: true, value: { id: ws.id, name: ws.name, apiKey } };
  });
}

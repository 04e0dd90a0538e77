import type { Db } from "@db/client";
import { workspaces } from "@db/schema";
import { newId } from "@/domain/ids";
import type { Plan } from "@/domain/statuses";

export interface WorkspaceRecord {
  id: string;
  name: string;
  plan: Plan;
}

export async function createWorkspace(
  db: Db,
  name: string,
  plan: Plan = "free",
): Promise<WorkspaceRecord> {
  const [row] = await db
    .insert(workspaces)
    .values({ id: newId("ws"), name, plan })
    .returning({ id: workspaces.id, name: workspaces.name, plan: workspaces.plan });
  if (!row) throw new Error("workspace insert returned nothing");
  return row;
}

export const DEFAULT_WORKSPACE_ID = "ws_default";

/** The embedded default's workspace; idempotent across starts and concurrent starters. */
export async function ensureDefaultWorkspace(db: Db): Promise<WorkspaceRecord> {
  await db
    .insert(workspaces)
    .values({ id: DEFAULT_WORKSPACE_ID, name: "default", plan: "pro" })
    .onConflictDoNothing({ target: workspaces.id });
  return { id: DEFAULT_WORKSPACE_ID, name: "default", plan: "pro" };
}

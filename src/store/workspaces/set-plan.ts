import type { Db } from "@db/client";
import { workspaces } from "@db/schema";
import { eq } from "drizzle-orm";
import type { Plan } from "@/domain/statuses";
import type { WorkspaceRecord } from "./create";

export type SetPlanOutcome =
  | { ok: true; value: WorkspaceRecord }
  | { ok: false; reason: "missing" };

/**
 * Moves the workspace to `plan`: zero rows → `missing`. Nothing keeps a copy of a
 * workspace's plan: the engine reads it with the row it claims (src/store/cells/row-step.ts)
 * and a run with its table, so the next claim and the next run see the new one.
 */
export async function setWorkspacePlan(
  db: Db,
  change: { workspaceId: string; plan: Plan },
): Promise<SetPlanOutcome> {
  const [row] = await db
    .update(workspaces)
    .set({ plan: change.plan })
    .where(eq(workspaces.id, change.workspaceId))
    .returning({ id: workspaces.id, name: workspaces.name, plan: workspaces.plan });
  return row ? { ok: true, value: row } : { ok: false, reason: "missing" };
}

import type { Db } from "@db/client";
import { workspaces } from "@db/schema";
import { eq } from "drizzle-orm";
import type { Plan } from "@/domain/statuses";

export async function getWorkspace(
  db: Db,
  id: string,
): Promise<{ id: string; name: string } | null> {
  const [row] = await db
    .select({ id: workspaces.id, name: workspaces.name })
    .from(workspaces)
    .where(eq(workspaces.id, id))
    .limit(1);
  return row ?? null;
}

/** A workspace's plan (null: no such workspace). */
export async function getWorkspacePlan(db: Db, id: string): Promise<Plan | null> {
  const [row] = await db
    .select({ plan: workspaces.plan })
    .from(workspaces)
    .where(eq(workspaces.id, id))
    .limit(1);
  return row?.plan ?? null;
}

import type { Db } from "@db/client";
import { apiKeys, workspaces } from "@db/schema";
import { and, eq, isNull } from "drizzle-orm";
import { hashApiKey } from "./keys";

/** The workspace a live (unrevoked) key belongs to, or null. */
export async function workspaceForKey(db: Db, key: string): Promise<string | null> {
  const [row] = await db
    .select({ workspaceId: apiKeys.workspaceId })
    .from(apiKeys)
    .where(and(eq(apiKeys.hash, hashApiKey(key)), isNull(apiKeys.revokedAt)))
    .limit(1);
  return row?.workspaceId ?? null;
}

/** The id and name of the workspace a live key belongs to, in one round trip; or null. */
export async function workspaceOfKey(
  db: Db,
  key: string,
): Promise<{ id: string; name: string } | null> {
  const [row] = await db
    .select({ id: workspaces.id, name: workspaces.name })
    .from(apiKeys)
    .innerJoin(workspaces, eq(workspaces.id, apiKeys.workspaceId))
    .where(and(eq(apiKeys.hash, hashApiKey(key)), isNull(apiKeys.revokedAt)))
    .limit(1);
  return row ?? null;
}

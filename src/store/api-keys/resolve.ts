import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { apiKeys } from "../../../db/schema";
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

import type { Db } from "@db/client";
import { apiKeys } from "@db/schema";
import { and, eq, isNull } from "drizzle-orm";
import { hashApiKey } from "./keys";

/** Revokes a key; false when it was unknown or already revoked. */
export async function revokeApiKey(db: Db, key: string): Promise<boolean> {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.hash, hashApiKey(key)), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return rows.length === 1;
}

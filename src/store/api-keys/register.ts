import type { Db } from "@db/client";
import { apiKeys } from "@db/schema";
import { sql } from "drizzle-orm";
import { newId } from "@/domain/ids";
import { hashApiKey, keyPrefix } from "./keys";

export type RegisterOutcome =
  | { ok: true }
  | { ok: false; reason: "key_belongs_to_another_workspace" };

/**
 * Registers `key` for the workspace. Idempotent: a key already known changes nothing; the
 * no-op update makes the statement return the existing row, so one round trip tells
 * whether the key is this workspace's.
 */
export async function registerApiKey(
  db: Db,
  reg: { workspaceId: string; key: string; label?: string },
): Promise<RegisterOutcome> {
  const { workspaceId, key, label } = reg;
  const [row] = await db
    .insert(apiKeys)
    .values({ id: newId("key"), workspaceId, prefix: keyPrefix(key), hash: hashApiKey(key), label })
    .onConflictDoUpdate({ target: apiKeys.hash, set: { hash: sql`excluded.hash` } })
    .returning({ workspaceId: apiKeys.workspaceId });
  return row?.workspaceId === workspaceId
    ? { ok: true }
    : { ok: false, reason: "key_belongs_to_another_workspace" };
}

import type { Db } from "@db/client";
import { hooks } from "@db/schema";
import { and, eq, sql } from "drizzle-orm";

/**
 * Revokes a table's hook; revoking twice is a no-op that keeps the first time. False only
 * when the workspace has no such hook on that table.
 */
export async function revokeHook(
  db: Db,
  hook: { workspaceId: string; tableId: string; hookId: string },
): Promise<boolean> {
  const { workspaceId, tableId, hookId } = hook;
  const rows = await db
    .update(hooks)
    .set({ revokedAt: sql`coalesce(${hooks.revokedAt}, now())` })
    .where(
      and(eq(hooks.id, hookId), eq(hooks.tableId, tableId), eq(hooks.workspaceId, workspaceId)),
    )
    .returning({ id: hooks.id });
  return rows.length === 1;
}

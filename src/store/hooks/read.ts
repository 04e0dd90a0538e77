import type { Db } from "@db/client";
import { hooks } from "@db/schema";
import { and, asc, eq, isNull } from "drizzle-orm";
import type { HookAction } from "@/domain/statuses";

export interface HookRecord {
  id: string;
  tableId: string;
  action: HookAction;
  createdAt: Date;
  revokedAt: Date | null;
}

/** What a delivery needs to verify and act: only for a hook that is not revoked. */
export interface LiveHook {
  id: string;
  workspaceId: string;
  tableId: string;
  action: HookAction;
  secretCiphertext: string;
}

export async function liveHook(db: Db, id: string): Promise<LiveHook | null> {
  const [row] = await db
    .select({
      id: hooks.id,
      workspaceId: hooks.workspaceId,
      tableId: hooks.tableId,
      action: hooks.action,
      secretCiphertext: hooks.secretCiphertext,
    })
    .from(hooks)
    .where(and(eq(hooks.id, id), isNull(hooks.revokedAt)))
    .limit(1);
  return row ?? null;
}

/** A table's hooks, revoked ones included, oldest first; never their secrets. */
export async function listHooks(
  db: Db,
  workspaceId: string,
  tableId: string,
): Promise<HookRecord[]> {
  return db
    .select({
      id: hooks.id,
      tableId: hooks.tableId,
      action: hooks.action,
      createdAt: hooks.createdAt,
      revokedAt: hooks.revokedAt,
    })
    .from(hooks)
    .where(and(eq(hooks.workspaceId, workspaceId), eq(hooks.tableId, tableId)))
    .orderBy(asc(hooks.createdAt), asc(hooks.id));
}

import type { Db } from "@db/client";
import { hooks } from "@db/schema";
import type { HookAction } from "@/domain/statuses";
import type { HookRecord } from "./read";

export interface NewHook {
  id: string;
  workspaceId: string;
  tableId: string;
  action: HookAction;
  /** Sealed by security/secret-box; the plain secret never reaches the database. */
  secretCiphertext: string;
}

export async function insertHook(db: Db, hook: NewHook): Promise<HookRecord> {
  const [row] = await db.insert(hooks).values(hook).returning({
    id: hooks.id,
    tableId: hooks.tableId,
    action: hooks.action,
    createdAt: hooks.createdAt,
    revokedAt: hooks.revokedAt,
  });
  if (!row) throw new Error("hook insert returned nothing");
  return row;
}

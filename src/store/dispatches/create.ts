import type { Db } from "@db/client";
import { dispatches } from "@db/schema";
import { newId } from "@/domain/ids";
import type { RunMode } from "@/domain/statuses";
import type { TypedCondition } from "@/domain/where";

export interface NewDispatch {
  tableId: string;
  groupIds: string[];
  mode: RunMode;
  rowIds: string[] | null;
  rowLimit: number | null;
  window: number;
  scanline?: boolean;
  dependsOn?: Record<string, string[]>;
  where?: TypedCondition[] | null;
  /** The run's credit cap (null or absent: none). */
  maxCredits?: number | null;
  /** Error/cancelled cells start from their last execution's checkpoints. */
  resume?: boolean;
}

/**
 * A new run, `stamping` from the start: until its last page is stamped the window must
 * not call it completed, even with nothing of it queued yet (a re-drive pass in that gap
 * would otherwise complete it empty, and its cells would run outside any window).
 */
export async function createDispatch(db: Db, d: NewDispatch): Promise<string> {
  const id = newId("run");
  await db.insert(dispatches).values({ id, ...d, stamping: true });
  return id;
}

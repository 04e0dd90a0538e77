import type { Db } from "@db/client";
import { sql } from "drizzle-orm";
import { type TransitionOutcome, transitionCell } from "./transition";

/** queued(e) → error: the carrier was aborted or timed out before it could claim the cell. */
export function failQueuedCell(
  db: Db,
  rowId: string,
  groupId: string,
  executionId: string,
  message: string,
): Promise<TransitionOutcome> {
  return transitionCell(db, {
    rowId,
    groupId,
    guard: sql`status = 'queued' and execution_id = ${executionId}`,
    set: sql`status = 'error', error = ${message}, finished_at = now()`,
  });
}

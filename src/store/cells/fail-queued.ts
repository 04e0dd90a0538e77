import type { Db } from "@db/client";
import { sql } from "drizzle-orm";
import { type CellRef, type TransitionOutcome, transitionCell } from "./transition";

/** queued(e) → error: the carrier was aborted or timed out before it could claim the cell. */
export function failQueuedCell(
  db: Db,
  cell: CellRef & { executionId: string; message: string },
): Promise<TransitionOutcome> {
  return transitionCell(db, {
    rowId: cell.rowId,
    groupId: cell.groupId,
    guard: sql`status = 'queued' and execution_id = ${cell.executionId}`,
    set: sql`status = 'error', error = ${cell.message}, finished_at = now()`,
  });
}

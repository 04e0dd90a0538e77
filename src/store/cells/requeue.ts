import type { Db } from "@db/client";
import { sql } from "drizzle-orm";
import {
  type CellAttemptRef,
  runningFence,
  type TransitionOutcome,
  transitionCell,
} from "./transition";

/**
 * running(e, n) → queued(e): the re-drive, or a worker that is shutting down, hands an
 * interrupted attempt back for a new carrier. Only under the row lock: holding it proves
 * no live carrier is running the cell. The execution id stays (its checkpoints stay
 * valid); the next claim makes it attempt n + 1, and every write is fenced on the
 * attempt, so a late statement of attempt n cannot land.
 */
export function requeueCell(db: Db, cell: CellAttemptRef): Promise<TransitionOutcome> {
  return transitionCell(db, {
    rowId: cell.rowId,
    groupId: cell.groupId,
    guard: runningFence(cell),
    set: sql`status = 'queued', queued_at = now(), started_at = null, running_block_ids = '{}'`,
  });
}

import type { Db } from "@db/client";
import { sql } from "drizzle-orm";
import {
  type CellAttemptRef,
  runningFence,
  type TransitionOutcome,
  transitionCell,
} from "./transition";

/**
 * Why an attempt goes back to the queue: `lost`, the re-drive found it running with its
 * row lock free (its worker or lock session died without ending it); `handed_back`, its
 * own carrier let it go unfinished (a worker shutting down).
 */
export type RequeueCause = "lost" | "handed_back";

/**
 * running(e, n) → queued(e): the re-drive, or a worker that is shutting down, hands an
 * interrupted attempt back for a new carrier. Only under the row lock: holding it proves
 * no live carrier is running the cell. The execution id stays (its checkpoints stay
 * valid); the next claim makes it attempt n + 1, and every write is fenced on the
 * attempt, so a late statement of attempt n cannot land. A lost attempt counts up the
 * cell's `losses` (the re-drive gives up on a cell lost too often); a hand-back does
 * not, as a pause does not: neither lost anything.
 */
export function requeueCell(
  db: Db,
  cell: CellAttemptRef,
  cause: RequeueCause,
): Promise<TransitionOutcome> {
  return transitionCell(db, {
    rowId: cell.rowId,
    groupId: cell.groupId,
    guard: runningFence(cell),
    set: sql`status = 'queued', queued_at = now(), started_at = null, running_block_ids = '{}'
             ${cause === "lost" ? sql`, losses = losses + 1` : sql``}`,
  });
}

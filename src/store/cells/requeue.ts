import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { type TransitionOutcome, transitionCell } from "./transition";

/**
 * running(e) → queued(e): the re-drive, or a worker that is shutting down, hands an
 * interrupted attempt back for a new carrier. Only under the row lock: holding it proves
 * no live carrier is running the cell. The execution id stays (its checkpoints stay
 * valid); the dead carrier cannot write with it, its session being gone or done.
 */
export function requeueCell(
  db: Db,
  rowId: string,
  groupId: string,
  executionId: string,
): Promise<TransitionOutcome> {
  return transitionCell(db, {
    rowId,
    groupId,
    guard: sql`status = 'running' and execution_id = ${executionId}`,
    set: sql`status = 'queued', queued_at = now(), started_at = null, running_block_ids = '{}'`,
  });
}

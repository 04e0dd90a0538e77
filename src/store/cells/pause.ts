import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { type TransitionOutcome, transitionCell } from "./transition";

/** running(e) → paused: the workflow waits (approval, long wait); no worker holds the cell. */
export function pauseCell(
  db: Db,
  rowId: string,
  groupId: string,
  executionId: string,
): Promise<TransitionOutcome> {
  return transitionCell(db, {
    rowId,
    groupId,
    guard: sql`status = 'running' and execution_id = ${executionId}`,
    set: sql`status = 'paused', running_block_ids = '{}'`,
  });
}

/** paused(e) → running, by the carrier that resumes it under the row lock. */
export function resumeCell(
  db: Db,
  rowId: string,
  groupId: string,
  executionId: string,
): Promise<TransitionOutcome> {
  return transitionCell(db, {
    rowId,
    groupId,
    guard: sql`status = 'paused' and execution_id = ${executionId}`,
    set: sql`status = 'running'`,
  });
}

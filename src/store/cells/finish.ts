import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import type { CellOutcome } from "../../domain/statuses";
import { type TransitionOutcome, transitionCell } from "./transition";

export interface Finish {
  blockErrors: Record<string, string>;
  outputs?: Record<string, unknown>;
}

/** running(e) → completed with an outcome, outputs merged into the row in the same statement. */
export function completeCell(
  db: Db,
  rowId: string,
  groupId: string,
  executionId: string,
  outcome: CellOutcome,
  finish: Finish,
): Promise<TransitionOutcome> {
  return transitionCell(db, {
    rowId,
    groupId,
    guard: sql`status = 'running' and execution_id = ${executionId}`,
    set: sql`status = 'completed', outcome = ${outcome}, error = null, finished_at = now(),
             running_block_ids = '{}', block_errors = ${JSON.stringify(finish.blockErrors)}::jsonb`,
    outputs: finish.outputs,
  });
}

/** running(e) → error with a plain message (failed, timed out, or limit exhausted). */
export function failCell(
  db: Db,
  rowId: string,
  groupId: string,
  executionId: string,
  message: string,
  finish: Finish,
): Promise<TransitionOutcome> {
  return transitionCell(db, {
    rowId,
    groupId,
    guard: sql`status = 'running' and execution_id = ${executionId}`,
    set: sql`status = 'error', outcome = null, error = ${message}, finished_at = now(),
             running_block_ids = '{}', block_errors = ${JSON.stringify(finish.blockErrors)}::jsonb`,
    outputs: finish.outputs,
  });
}

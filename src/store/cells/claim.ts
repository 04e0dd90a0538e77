import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { type TransitionOutcome, transitionCell } from "./transition";

/**
 * What a claim sets: a fresh attempt with nothing of the last one left on the cell, and
 * the task run carrying it (a Stop cancels that run).
 */
export function claimSet(runId: string | null): SQL {
  return sql`status = 'running', started_at = now(), attempt = attempt + 1, run_id = ${runId},
             running_block_ids = '{}', block_errors = '{}'::jsonb, outcome = null, error = null`;
}

/** queued(e) → running, by the carrier that holds the row lock. */
export function claimCell(
  db: Db,
  rowId: string,
  groupId: string,
  executionId: string,
  runId: string | null = null,
): Promise<TransitionOutcome> {
  return transitionCell(db, {
    rowId,
    groupId,
    guard: sql`status = 'queued' and execution_id = ${executionId}`,
    set: claimSet(runId),
  });
}

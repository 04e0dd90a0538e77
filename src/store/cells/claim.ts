import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { type TransitionOutcome, transitionCell } from "./transition";

/** What a claim sets: a fresh attempt with nothing of the last one left on the cell. */
export const claimSet = sql`status = 'running', started_at = now(), attempt = attempt + 1,
             running_block_ids = '{}', block_errors = '{}'::jsonb, outcome = null, error = null`;

/** queued(e) → running, by the carrier that holds the row lock. */
export function claimCell(
  db: Db,
  rowId: string,
  groupId: string,
  executionId: string,
): Promise<TransitionOutcome> {
  return transitionCell(db, {
    rowId,
    groupId,
    guard: sql`status = 'queued' and execution_id = ${executionId}`,
    set: claimSet,
  });
}

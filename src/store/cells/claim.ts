import type { Db } from "@db/client";
import { type SQL, sql } from "drizzle-orm";
import type { LostReason } from "@/domain/statuses";
import { type CellRef, transitionWithAttempt } from "./transition";

/**
 * What a claim sets: a fresh attempt with nothing of the last one left on the cell, and
 * the task run carrying it (a Stop cancels that run). `attempt` counts up: it is the
 * new attempt's number, which fences its writes.
 */
export function claimSet(runId: string | null | SQL): SQL {
  return sql`status = 'running', started_at = now(), attempt = attempt + 1, run_id = ${runId},
             running_block_ids = '{}', block_errors = '{}'::jsonb, outcome = null, error = null`;
}

export type ClaimOutcome = { ok: true; attempt: number } | { ok: false; reason: LostReason };

/** queued(e) → running, by the carrier that holds the row lock; returns the attempt's number. */
export async function claimCell(
  db: Db,
  claim: CellRef & { executionId: string; runId?: string | null },
): Promise<ClaimOutcome> {
  const { outcome, attempt } = await transitionWithAttempt(db, {
    rowId: claim.rowId,
    groupId: claim.groupId,
    guard: sql`status = 'queued' and execution_id = ${claim.executionId}`,
    set: claimSet(claim.runId ?? null),
  });
  return outcome.ok ? { ok: true, attempt: attempt ?? 0 } : outcome;
}

import type { Db } from "@db/client";
import { sql } from "drizzle-orm";
import type { ChargeKey } from "@/domain/charges";
import type { CellOutcome } from "@/domain/statuses";
import { jsonb } from "../sql";
import {
  type CellAttemptRef,
  runningFence,
  type TransitionOutcome,
  transitionCell,
} from "./transition";

export interface Finish {
  blockErrors: Record<string, string>;
  outputs?: Record<string, unknown>;
  /** Written to the cell's `details` when given (an enrichment's per-provider report). */
  details?: Record<string, unknown>;
  /**
   * The paid answers this write records: their reservations are charged in its statement
   * if it wins its fence (`store/usage/settle.ts`). Only a `complete` write carries them.
   */
  charges?: readonly ChargeKey[];
}

/** The terminal write of an attempt: completed with an outcome, or error with a message. */
export type Terminal =
  | { kind: "complete"; outcome: CellOutcome; finish: Finish }
  | { kind: "fail"; message: string; finish: Finish };

/**
 * running(e) → error with a plain message (failed, timed out, or limit exhausted), outside
 * a row step: a carrier that must give up on a claimed cell, or the re-drive. An
 * attempt's ordinary terminal write (completed or error) is part of its row step
 * (`row-step.ts`).
 */
export function failCell(
  db: Db,
  cell: CellAttemptRef & { message: string; finish: Finish },
): Promise<TransitionOutcome> {
  const { finish } = cell;
  return transitionCell(db, {
    rowId: cell.rowId,
    groupId: cell.groupId,
    guard: runningFence(cell),
    set: sql`status = 'error', outcome = null, error = ${cell.message}, finished_at = now(), running_block_ids = '{}',
             block_errors = ${JSON.stringify(finish.blockErrors)}::jsonb${
               finish.details ? sql`, details = ${jsonb(finish.details)}` : sql``
             }`,
    outputs: finish.outputs,
  });
}

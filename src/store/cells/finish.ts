import type { Db } from "@db/client";
import { sql } from "drizzle-orm";
import type { CellOutcome } from "@/domain/statuses";
import { jsonb } from "../sql";
import {
  type AttemptRef,
  runningFence,
  type TransitionOutcome,
  type TransitionSpec,
  transitionCell,
} from "./transition";

export interface Finish {
  blockErrors: Record<string, string>;
  outputs?: Record<string, unknown>;
  /** Written to the cell's `details` when given (an enrichment's per-provider report). */
  details?: Record<string, unknown>;
}

/** The terminal write of an attempt: completed with an outcome, or error with a message. */
export type Terminal =
  | { kind: "complete"; outcome: CellOutcome; finish: Finish }
  | { kind: "fail"; message: string; finish: Finish };

/**
 * running(e) → completed (outputs merged into the row in the same statement) or
 * running(e) → error with a plain message (failed, timed out, or limit exhausted).
 */
export function terminalSpec(
  rowId: string,
  groupId: string,
  ref: AttemptRef,
  end: Terminal,
): TransitionSpec {
  const guard = runningFence(ref);
  const common = sql`finished_at = now(), running_block_ids = '{}',
             block_errors = ${JSON.stringify(end.finish.blockErrors)}::jsonb${
               end.finish.details ? sql`, details = ${jsonb(end.finish.details)}` : sql``
             }`;
  const set =
    end.kind === "complete"
      ? sql`status = 'completed', outcome = ${end.outcome}, error = null, ${common}`
      : sql`status = 'error', outcome = null, error = ${end.message}, ${common}`;
  return { rowId, groupId, guard, set, outputs: end.finish.outputs };
}

export function failCell(
  db: Db,
  rowId: string,
  groupId: string,
  ref: AttemptRef,
  message: string,
  finish: Finish,
): Promise<TransitionOutcome> {
  return transitionCell(db, terminalSpec(rowId, groupId, ref, { kind: "fail", message, finish }));
}

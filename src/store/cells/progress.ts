import type { Db } from "@db/client";
import { sql } from "drizzle-orm";
import { textArray } from "../sql";
import {
  type CellAttemptRef,
  runningFence,
  type TransitionOutcome,
  transitionCell,
} from "./transition";

/** running(e) → running with new progress: the blocks running now and outputs so far. */
export function writeProgress(
  db: Db,
  cell: CellAttemptRef & {
    progress: {
      runningBlockIds: string[];
      blockErrors: Record<string, string>;
      outputs?: Record<string, unknown>;
    };
  },
): Promise<TransitionOutcome> {
  const { progress } = cell;
  return transitionCell(db, {
    rowId: cell.rowId,
    groupId: cell.groupId,
    guard: runningFence(cell),
    set: sql`running_block_ids = ${textArray(progress.runningBlockIds)},
             block_errors = ${JSON.stringify(progress.blockErrors)}::jsonb`,
    outputs: progress.outputs,
  });
}

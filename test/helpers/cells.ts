/**
 * Terminal writes the way production makes them: a carrier finishes an attempt through
 * its row step (store/cells/row-step.ts), the same statement that claims the row's next
 * cell. Tests that force an interleaving by hand call this, so the guard they prove is
 * the one the engine's writes go through.
 */
import type { Db } from "@db/client";
import type { CellOutcome } from "@/domain/statuses";
import type { Finish } from "@/store/cells/finish";
import { rowStep } from "@/store/cells/row-step";
import type { CellAttemptRef, TransitionOutcome } from "@/store/cells/transition";

/** running(e, attempt) → completed with `outcome`, outputs merged into the row. */
export async function completeCell(
  db: Db,
  cell: CellAttemptRef & { tableId: string; outcome: CellOutcome; finish: Finish },
): Promise<TransitionOutcome> {
  const { outcome, finish } = cell;
  const step = await rowStep(db, {
    tableId: cell.tableId,
    rowId: cell.rowId,
    finish: {
      groupId: cell.groupId,
      ref: { executionId: cell.executionId, attempt: cell.attempt },
      end: { kind: "complete", outcome, finish },
    },
  });
  if (!step.finished) throw new Error("a row step with a terminal write reported none");
  return step.finished;
}

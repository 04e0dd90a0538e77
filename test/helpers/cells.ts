/**
 * Claims and terminal writes the way production makes them: a carrier claims a cell and
 * finishes an attempt through its row step (store/cells/row-step.ts). Tests that force
 * an interleaving by hand call these, so the guard they prove is the one the engine's
 * writes go through.
 */
import { type Db, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { CellOutcome } from "@/domain/statuses";
import type { Finish } from "@/store/cells/finish";
import { type ClaimedCell, rowStep } from "@/store/cells/row-step";
import type { CellAttemptRef, CellRef, TransitionOutcome } from "@/store/cells/transition";

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

/**
 * queued → running the one way the engine makes it: a carrier's row step claims the
 * row's next queued cell, `groupId` first, under the table's current schema version.
 * The claim (its attempt number fences the attempt's writes), or null when the step
 * claimed nothing (no queued cell: cancelled, running, gone).
 */
export async function claimNext(
  db: Db,
  cell: CellRef & { tableId: string; runId?: string },
): Promise<ClaimedCell | null> {
  const [table] = await queryRows<{ version: number }>(
    db,
    sql`select schema_version as version from tables where id = ${cell.tableId}`,
  );
  if (!table) return null;
  const { claimed } = await rowStep(db, {
    tableId: cell.tableId,
    rowId: cell.rowId,
    claim: { schemaVersion: table.version, order: [cell.groupId], runId: cell.runId ?? null },
  });
  return claimed;
}

/**
 * Terminal writes the way production makes them: a carrier finishes an attempt through
 * its row step (store/cells/row-step.ts), the same statement that claims the row's next
 * cell. Tests that force an interleaving by hand call this, so the guard they prove is
 * the one the engine's writes go through.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { CellOutcome } from "@/domain/statuses";
import type { Finish } from "@/store/cells/finish";
import { type ClaimedCell, rowStep } from "@/store/cells/row-step";
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

/**
 * queued → running the way a carrier claims: through its row step (the one claim door),
 * in the table's group order. Returns the claimed cell, or null when none was queued.
 */
export async function claimByStep(
  db: Db,
  cell: { tableId: string; rowId: string; runId?: string },
): Promise<ClaimedCell | null> {
  const [table] = await queryRows<{ version: number; order: string[] }>(
    db,
    sql`select schema_version as version,
               array(select g->>'id' from jsonb_array_elements(schema->'groups') g) as "order"
          from tables where id = ${cell.tableId}`,
  );
  if (!table) throw new Error(`no table ${cell.tableId}`);
  const step = await rowStep(db, {
    tableId: cell.tableId,
    rowId: cell.rowId,
    claim: { schemaVersion: table.version, order: table.order, runId: cell.runId ?? null },
  });
  return step.claimed;
}

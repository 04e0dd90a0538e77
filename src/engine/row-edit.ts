/**
 * A row edit. Invariant: the merge of the new values and the re-arm it causes (the cells
 * of the auto-run groups reading them, and of their dependents, removed with their output
 * columns; the auto-fire's run and its stamps; the cancel of an attempt still running)
 * commit together or not at all. So a failure never leaves new inputs beside outputs
 * computed from the old ones. The transaction is retried whole on a deadlock or a
 * serialization failure, as the Stop is: a lost lock race (with a carrier's write, a
 * run's stamping page, another edit) is never answered with an error. It locks the
 * re-armed cells (group order) before the row, as a carrier's terminal write does.
 *
 * It takes the table's stop lock shared first (as a carrier's auto-run stamp does), so an
 * edit and a Stop are one of their two serial orders: a Stop that committed first is seen
 * by every statement of the edit, whose run and cells are then newer than it (a new
 * request: it lifts the Stop's hold on the row); a Stop that comes during the edit waits
 * for its commit and stops the cells it stamped. Without it, the edit's run, created in
 * an uncommitted transaction, would be invisible to the Stop while older than it.
 *
 * Carriers are enqueued after the commit (never before), and running attempts told to
 * abort in this process; the cancel NOTIFY for other processes is sent at the commit.
 * It runs with the request side's handle (`RequestEngine`); the auto-fire's stamps go
 * through the edit's transaction with the handle's backend, the hand-out through its database.
 */
import { retryOnConflict } from "@db/sqlstate";
import { TableSchema } from "@/contracts/table";
import { reArmedByEdit } from "@/domain/auto-run";
import { clearGroupCells } from "@/store/cells/clear";
import { tableForEngine } from "@/store/engine-reads";
import { patchRow } from "@/store/rows/patch";
import { lockAgainstStop } from "@/store/stops/stop-lock";
import { type AutoFired, launchAutoFire, stampAutoFire } from "./auto-run";
import { abortLocal, publishCancel } from "./cancellation";
import type { RequestEngine } from "./handle";

export interface RowEdit {
  tableId: string;
  rowId: string;
  /** Values by column id; a null clears the column. Checked against the columns already. */
  data: Record<string, unknown>;
}

/** Merges the edit and re-arms what it changed; null when the row (or table) is gone. */
export async function editRow(
  engine: RequestEngine,
  edit: RowEdit,
): Promise<{ autoRun: AutoFired } | null> {
  const { db, backend } = engine;
  const { tableId, rowId } = edit;
  const done = await retryOnConflict(() =>
    db.transaction(async (tx) => {
      await lockAgainstStop(tx, tableId);
      const table = await tableForEngine(tx, tableId);
      if (!table) return null;
      const { groupIds, clearColumns } = reArmedByEdit(
        TableSchema.parse(table.schema),
        Object.keys(edit.data),
      );
      // The clear before the merge: cells, then the row, the order a carrier's terminal
      // write locks them in. A row gone (or of another table) had no cells here to clear.
      const removed = await clearGroupCells(tx, { tableId, rowId, groupIds, clearColumns });
      if (!(await patchRow(tx, edit))) return null;
      const running = removed.filter((r) => r.was === "running").map((r) => r.executionId);
      await publishCancel(tx, running);
      const fired = await stampAutoFire({ db: tx, backend }, { table, rowIds: [rowId] });
      return { running, fired };
    }),
  );
  if (!done) return null;
  abortLocal(done.running);
  await launchAutoFire(engine, { tableId, run: done.fired });
  return { autoRun: { dispatchId: done.fired.dispatchId, stamped: done.fired.stamped } };
}

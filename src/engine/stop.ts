/**
 * Stop. When `stopRuns` returns, no cell in scope is queued or running (one set-based
 * UPDATE made them `cancelled`), and none can become so without a new run request:
 * claims and attempt writes are guarded by status. Running attempts are told to abort
 * here and in every other worker process; dispatches left with nothing to do end as
 * `cancelled`, and those that still have work keep sliding.
 */
import type { Db } from "../../db/client";
import { carrierSpec, type TaskBackend } from "../backends/port";
import { type CancelScope, cancelCells } from "../store/cells/cancel";
import { advanceDispatch } from "../store/dispatches/advance";
import { finishCancelledDispatches } from "../store/dispatches/finish-cancelled";
import { endStamping } from "../store/dispatches/stamp-next";
import { abortLocal, publishCancel } from "./cancellation";

export async function stopRuns(
  db: Db,
  backend: TaskBackend,
  scope: CancelScope,
): Promise<{ cancelled: number }> {
  // One transaction: when the tombstones become visible, the dispatches they emptied are
  // already `cancelled`, so a carrier advancing meanwhile cannot call them `completed`.
  // The cancel NOTIFYs are delivered at the same commit.
  const { cancelled, ended } = await db.transaction(async (tx) => {
    // First the dispatches: a background stamping page in progress is waited for (its
    // cells are then seen and cancelled below) and no further page follows. Any Stop
    // ends the stamping of the runs in its scope, even a Stop of a few rows: the rest of
    // such a run stays unstamped rather than restart rows someone just stopped.
    await endStamping(tx, scope.tableId, scope.dispatchId);
    const cells = await cancelCells(tx, scope);
    await publishCancel(
      tx,
      cells.filter((c) => c.was === "running").map((c) => c.executionId),
    );
    return {
      cancelled: cells,
      ended: new Set(await finishCancelledDispatches(tx, scope.tableId, scope.dispatchId)),
    };
  });
  const running = cancelled.filter((c) => c.was === "running");
  abortLocal(running.map((c) => c.executionId));
  // Where the cancel channel cannot reach (trigger.dev runs), cancel the runs themselves.
  await backend.cancel([...new Set(running.flatMap((c) => (c.runId ? [c.runId] : [])))]);
  // A partial Stop frees window slots of dispatches that go on: hand them out now.
  const touched = new Set<string>();
  for (const c of cancelled)
    if (c.dispatchId && !ended.has(c.dispatchId)) touched.add(c.dispatchId);
  for (const id of touched) {
    const next = await advanceDispatch(db, id);
    await backend.enqueue(
      next.rowIds.map((rowId) => carrierSpec({ tableId: scope.tableId, rowId, dispatchId: id })),
    );
  }
  return { cancelled: cancelled.length };
}

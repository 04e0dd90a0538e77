/**
 * Stop. When `stopRuns` returns, no cell in scope is queued or running, as every read
 * shows it, and none becomes so without a new run request: one set-based UPDATE made them
 * `cancelled` (claims and attempt writes are guarded by status), or, over more than
 * STOP_EAGER_UP_TO queued cells, the queued cells of each run in scope are covered by a
 * cancel scope recorded in the same transaction (store/cells/cancel-scope.ts: reads and
 * counts show them `cancelled`, claims refuse them, a new run request re-stamps them) and
 * the rewrite job makes them `cancelled` after (engine/covered-rewrite-loop.ts), the runs in scope that are still stamping stamp
 * nothing it covers (`holdStamping`), and a carrier's auto-run on the rows it covers is
 * held (`recordStop`) until something new happens there. All of it is one transaction,
 * taken under the table's stop lock and retried whole on a deadlock, so a Stop racing
 * carriers, stamps and other Stops never answers an error for a lost lock race.
 * Running attempts are told to abort here and in every other worker process; dispatches
 * left with nothing to do end as `cancelled`, and those that still have work keep sliding.
 * Where a run's cancel is a remote call (trigger.dev), the runs go to the cancel outbox in
 * the same transaction, with the row each carries and the auto-run groups the Stop left
 * unheld, and are cancelled after the Stop returns, by whichever drainer gets there
 * (src/engine/run-cancel-drain.ts): the Stop never waits on the platform's API. A run
 * that still carries work outside the Stop when the drainer comes (its row's other
 * queued or running cells, or an auto-run it may still stamp) is not cancelled: the
 * stopped attempt ends on its tombstone (`attempt.ts`, the stop check) and the run goes on.
 * It runs with the request side's handle (`RequestEngine`): its database, the backend whose
 * windows it slides, and the race point after its commit.
 */
import type { Db } from "@db/client";
import { retryOnConflict } from "@db/sqlstate";
import { TableSchema } from "@/contracts/table";
import { autoRunUnheld } from "@/domain/auto-run";
import type { TypedCondition } from "@/domain/where";
import { type CancelScope, cancelCells } from "@/store/cells/cancel";
import { recordCancelScopes, runsBeyondEager } from "@/store/cells/cancel-scope";
import { finishCancelledDispatches } from "@/store/dispatches/finish-cancelled";
import { holdStamping } from "@/store/dispatches/stop-stamping";
import { stopHoldSource } from "@/store/engine-reads";
import { addRunCancels, type RunOnRow } from "@/store/run-cancels/outbox";
import { recordStop } from "@/store/stops/record";
import { lockForStop } from "@/store/stops/stop-lock";
import { abortLocal, publishCancel } from "./cancellation";
import { wakeCoveredRewriters } from "./covered-rewrite-loop";
import { slideWindows } from "./dispatcher";
import type { RequestEngine } from "./handle";
import { at } from "./race-points";
import { wakeRunCancelDrainers } from "./run-cancel-loop";

/**
 * Up to this many queued cells, a Stop rewrites them itself (each a `cancelled` cell when it
 * returns); above, it records cancel scopes (store/cells/cancel-scope.ts) and answers in
 * the time of a count, and the rewrite job makes them `cancelled` in batches after.
 */
export const STOP_EAGER_UP_TO = 10_000;

export interface StopScope extends Omit<CancelScope, "stopSeq"> {
  /** Checked conditions: the Stop covers the rows that match them when it is made. */
  where?: readonly TypedCondition[];
}

/**
 * The auto-run groups this Stop leaves unheld on the rows it covers (a Stop naming groups,
 * or a run, holds those and what depends on them; any other Stop holds every group).
 */
async function cascadeLeft(tx: Db, scope: Omit<CancelScope, "stopSeq">): Promise<string[]> {
  if (!scope.groupIds && !scope.dispatchId) return [];
  const source = await stopHoldSource(tx, scope.tableId, scope.dispatchId);
  if (!source) return [];
  // Parsed here (no cache): a Stop comes from a request, whose handle has no definitions.
  const schema = TableSchema.parse(source.schema);
  return autoRunUnheld(schema, scope.groupIds ?? source.runGroups);
}

export async function stopRuns(
  engine: RequestEngine,
  request: StopScope,
): Promise<{ cancelled: number }> {
  const { db, backend, pause } = engine;
  const { where, ...scope } = request;
  // One transaction: when the tombstones become visible, the dispatches they emptied are
  // already `cancelled`, so a carrier advancing meanwhile cannot call them `completed`.
  // The cancel NOTIFYs are delivered at the same commit.
  const { cancelled, covered, scoped, ended } = await retryOnConflict(() =>
    db.transaction(async (tx) => {
      await lockForStop(tx, scope.tableId);
      // The runs first: a stamping page in progress is waited for (its cells are then
      // seen and cancelled below), and the pages after it leave out what this Stop covers.
      // A `where` is matched after that, so it sees what such a page stamped.
      const { stopSeq } = await holdStamping(tx, { ...scope, matchRows: where !== undefined });
      const matched = stopSeq === null ? scope : { ...scope, stopSeq };
      await recordStop(
        tx,
        where && stopSeq !== null
          ? { ...scope, where: { seq: stopSeq, conditions: where } }
          : scope,
      );
      // A Stop over many queued cells records them by scope instead of rewriting them (the
      // rewrite job does that later); what the windows bound it cancels here, as a small one.
      const scoped = await runsBeyondEager(tx, matched, engine.stopEagerUpTo ?? STOP_EAGER_UP_TO);
      const covered = scoped ? await recordCancelScopes(tx, matched, scoped) : 0;
      const cells = await cancelCells(tx, matched, { besideScopes: scoped !== null });
      const running = cells.filter((c) => c.was === "running");
      await publishCancel(
        tx,
        running.map((c) => c.executionId),
      );
      if (backend.remoteCancel) {
        const runs = new Map<string, RunOnRow>();
        for (const c of running) if (c.runId) runs.set(c.runId, { runId: c.runId, rowId: c.rowId });
        if (runs.size > 0)
          await addRunCancels(tx, {
            tableId: scope.tableId,
            runs: [...runs.values()],
            cascadeGroups: await cascadeLeft(tx, scope),
          });
      }
      return {
        cancelled: cells,
        covered,
        scoped: scoped ?? [],
        ended: new Set(
          await finishCancelledDispatches(tx, {
            tableId: scope.tableId,
            dispatchId: scope.dispatchId,
          }),
        ),
      };
    }),
  );
  await at(pause, "stop:committed", { tableId: scope.tableId });
  const running = cancelled.filter((c) => c.was === "running");
  abortLocal(running.map((c) => c.executionId));
  // Where the cancel channel cannot reach (trigger.dev runs), the outbox's drain cancels
  // the runs themselves; this process's drainer, if it has one, starts now.
  if (backend.remoteCancel && running.some((c) => c.runId)) wakeRunCancelDrainers();
  // A partial Stop frees window slots of dispatches that go on: hand them out now.
  const touched = new Set<string>();
  for (const c of cancelled)
    if (c.dispatchId && !ended.has(c.dispatchId)) touched.add(c.dispatchId);
  for (const d of scoped) if (!ended.has(d)) touched.add(d);
  await slideWindows(engine, { tableId: scope.tableId, dispatchIds: [...touched] });
  if (scoped.length > 0) wakeCoveredRewriters();
  return { cancelled: cancelled.length + covered };
}

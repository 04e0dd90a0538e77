/**
 * The re-drive: heals what a crashed worker, a lost job or a failed enqueue left behind.
 * Invariants: a `running` cell is touched only while the re-drive holds its row lock,
 * which proves no live carrier is running it (a crashed carrier's lock died with its
 * connection); it goes back to `queued` (or to `error` once it has been lost
 * MAX_ATTEMPTS times) and the row gets a carrier. A `queued` cell that waited past the
 * grace period with its row lock free gets a carrier. Every active dispatch's window is
 * advanced (it hands out rows a lost carrier never asked for, and completes a dispatch
 * with nothing left); a background stamping that stalled is re-enqueued.
 * A paused wait that is due (its delayed carrier lost) is resumed. Every step is
 * idempotent, so passes on many machines at once only duplicate enqueues, and a
 * duplicate carrier finds the lock taken and leaves.
 */
import type { Database } from "../../db/client";
import { carrierSpec, type EnqueueSpec, stamperSpec, type TaskBackend } from "../backends/port";
import type { Logger } from "../config/log";
import { failCell } from "../store/cells/finish";
import { activeDispatches, orphanCandidates } from "../store/cells/orphans";
import { requeueCell } from "../store/cells/requeue";
import { dueWaits, resumeCell } from "../store/cells/resume";
import { advanceDispatch } from "../store/dispatches/advance";
import { at, type Pause } from "./race-points";
import { acquireRowLock } from "./row-lock";

/** How often a cell may lose its worker before the re-drive gives up on it. */
export const MAX_ATTEMPTS = 3;
/** A queued cell younger than this may simply be waiting for its job to start. */
export const QUEUED_GRACE_MS = 10_000;
/** How often a worker process runs a pass (the heal time is at most this + the grace). */
export const REDRIVE_EVERY_MS = 15_000;
/**
 * How often a worker process probes for running cells that lost their worker (their row
 * lock is free); a hit runs a pass at once, so a dead worker's cells heal within about
 * this, not within a pass interval.
 */
export const ORPHAN_PROBE_EVERY_MS = 2_000;
const PASS_LIMIT = 1_000;

export interface RedriveReport {
  requeued: number;
  failed: number;
  carriers: number;
  handedOut: number;
  stampers: number;
}

export async function redriveOrphans(deps: {
  database: Database;
  backend: TaskBackend;
  log: Logger;
  /** Tests: hold the pass between its statements (see race-points.ts). */
  pause?: Pause;
}): Promise<RedriveReport> {
  const { database, backend, log } = deps;
  const report: RedriveReport = { requeued: 0, failed: 0, carriers: 0, handedOut: 0, stampers: 0 };
  const enqueue: EnqueueSpec[] = [];
  const candidates = await orphanCandidates(database.db, {
    queuedGraceMs: QUEUED_GRACE_MS,
    limit: PASS_LIMIT,
  });
  for (const c of candidates) {
    const session = await acquireRowLock(database, c.tableId, c.rowId);
    if (!session) continue; // A live carrier holds the row: not an orphan.
    let carry = c.queuedStale;
    try {
      await at(deps.pause, "redrive:row", { rowId: c.rowId });
      for (const cell of c.running) {
        const ids = { tableId: c.tableId, rowId: c.rowId, groupId: cell.groupId };
        if (cell.attempt >= MAX_ATTEMPTS) {
          const w = await failCell(
            session.db,
            c.rowId,
            cell.groupId,
            cell,
            `The worker running this cell was lost ${cell.attempt} times; run it again`,
            { blockErrors: {} },
          );
          if (w.ok) report.failed++;
          log.warn({ ...ids, attempt: cell.attempt }, "re-drive gave up on a cell");
          continue;
        }
        const w = await requeueCell(session.db, c.rowId, cell.groupId, cell);
        if (w.ok) {
          report.requeued++;
          carry = true;
          log.info({ ...ids, executionId: cell.executionId }, "re-drive requeued an orphan");
        }
      }
    } finally {
      const released = await session.release(c.dispatchId ? [c.dispatchId] : []);
      // A carrier that came while we held the lock left the row to us.
      if (released.moreQueued) carry = true;
      for (const a of released.advances ?? []) {
        for (const rowId of a.rowIds)
          enqueue.push(carrierSpec({ tableId: c.tableId, rowId, dispatchId: a.dispatchId }));
      }
    }
    if (carry) {
      report.carriers++;
      enqueue.push(
        carrierSpec({ tableId: c.tableId, rowId: c.rowId, dispatchId: c.dispatchId ?? undefined }),
      );
    }
  }
  // Due waits whose delayed carrier was lost.
  for (const w of await dueWaits(database.db, PASS_LIMIT)) {
    const resumed = await resumeCell(database.db, w, { dueWait: true });
    if (resumed.ok) {
      report.carriers++;
      enqueue.push(carrierSpec({ tableId: w.tableId, rowId: w.rowId }));
    }
  }
  await at(deps.pause, "redrive:advance");
  for (const d of await activeDispatches(database.db, { stampingIdleMs: 30_000 })) {
    const next = await advanceDispatch(database.db, d.id);
    report.handedOut += next.rowIds.length;
    for (const rowId of next.rowIds)
      enqueue.push(carrierSpec({ tableId: d.tableId, rowId, dispatchId: d.id }));
    if (d.stampingStalled) {
      report.stampers++;
      enqueue.push(stamperSpec({ tableId: d.tableId, dispatchId: d.id }));
    }
  }
  await backend.enqueue(enqueue);
  return report;
}

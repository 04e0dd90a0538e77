/**
 * The re-drive: heals what a crashed worker, a lost job or a failed enqueue left behind.
 * Invariants: a `running` cell is touched only while the re-drive holds its row lock,
 * which proves no live carrier is running it (a crashed carrier's lock died with its
 * connection); it goes back to `queued`, counted as a loss (or to `error` once this is
 * its MAX_LOSSES-th loss: pauses, resumes and a shutdown's hand-backs are no losses),
 * and the row gets a carrier. A `queued` cell gets a carrier when it
 * is stale (stamped and, in an active run, handed out longer than QUEUED_GRACE_MS ago:
 * a row handed out later is waiting for its carrier, however old its stamp; see
 * store/cells/orphans.ts) and its row lock is free, both read after the candidates, not
 * taken from their snapshot (the row's live carrier may have finished it since). Such a
 * row is healed within about 2 × the grace + a pass interval of its hand-out. Every
 * active dispatch's window is advanced (it hands out rows a lost carrier never asked
 * for, and completes a dispatch with nothing left); a background stamping that stalled
 * is re-enqueued. A paused wait that is due (its delayed carrier lost) is resumed. A
 * pass reads at most PASS_LIMIT candidates and never a row a live carrier holds, so rows
 * in flight, however many, cannot keep an orphan out of its read.
 * Every step is idempotent, so passes on many machines at once only duplicate enqueues,
 * and a duplicate carrier finds the lock taken and leaves.
 */
import type { Db } from "@db/client";
import { carrierSpec, type EnqueueSpec, stamperSpec } from "@/backends/port";
import { failCell } from "@/store/cells/finish";
import { activeDispatches, orphanCandidates, queuedOrphan } from "@/store/cells/orphans";
import { requeueCell } from "@/store/cells/requeue";
import { dueWaits, resumeCell } from "@/store/cells/resume";
import { advanceDispatch } from "@/store/dispatches/advance";
import type { Engine } from "./handle";
import { at } from "./race-points";
import { acquireRowLock } from "./row-lock";

/** The loss of its worker the re-drive gives up on a cell at (its execution's third). */
export const MAX_LOSSES = 3;
/**
 * How often a worker process runs a pass (a lost carrier's queued row is healed within
 * about this + 2 × the grace of its hand-out).
 */
export const REDRIVE_EVERY_MS = 15_000;
/**
 * How often a worker process probes for running cells that lost their worker (their row
 * lock is free); a hit runs a pass at once, so a dead worker's cells heal within about
 * this, not within a pass interval.
 */
export const ORPHAN_PROBE_EVERY_MS = 2_000;
/** Candidates a pass reads at most (oldest first; see store/cells/orphans.ts). */
const PASS_LIMIT = 1_000;

export interface RedriveReport {
  /** Running cells whose worker was lost, handed back to the queue (their rows carried). */
  requeued: number;
  /** Running cells lost for the MAX_LOSSES-th time, ended as errors. */
  failed: number;
  /** Rows with queued cells nobody carried, given a carrier (no running cell requeued). */
  queuedRows: number;
  /** Due waits whose delayed carrier was lost, resumed and carried. */
  resumed: number;
  /** Carrier jobs enqueued for the rows above. */
  carriers: number;
  /**
   * Rows the windows handed out when the pass slid them: rows a lost carrier never asked
   * for, or a slot the pass freed before a finishing carrier's own step; not by itself a
   * sign of an orphan.
   */
  handedOut: number;
  /** Background stampings that stalled, enqueued again. */
  stampers: number;
}

/** Whether the pass healed something (not only slid windows), for its log line. */
export function healedSomething(r: RedriveReport): boolean {
  return r.requeued + r.failed + r.queuedRows + r.resumed + r.stampers > 0;
}

/** What of the engine handle a pass uses (tests: `pause` holds it between its statements). */
export type RedriveEngine = Pick<
  Engine,
  "database" | "backend" | "log" | "pause" | "locks" | "advances"
>;

/** One pass's report and the carriers and stampers it enqueues at its end. */
interface Pass {
  readonly engine: RedriveEngine;
  readonly report: RedriveReport;
  readonly enqueue: EnqueueSpec[];
}

type Candidate = Awaited<ReturnType<typeof orphanCandidates>>[number];

const carry = (pass: Pass, c: { tableId: string; rowId: string; dispatchId: string | null }) => {
  pass.report.carriers++;
  pass.enqueue.push(
    carrierSpec({ tableId: c.tableId, rowId: c.rowId, dispatchId: c.dispatchId ?? undefined }),
  );
};

export async function redriveOrphans(engine: RedriveEngine): Promise<RedriveReport> {
  const { database } = engine;
  const pass: Pass = {
    engine,
    report: {
      requeued: 0,
      failed: 0,
      queuedRows: 0,
      resumed: 0,
      carriers: 0,
      handedOut: 0,
      stampers: 0,
    },
    enqueue: [],
  };
  const candidates = await orphanCandidates(database.db, { limit: PASS_LIMIT });
  for (const c of candidates) {
    if (c.running.length === 0) {
      // Only queued cells: nothing to change under the lock, so the pass does not take it
      // (a carrier finding it taken would leave the row to us, stale or not). Judged on
      // fresh state: the row's carrier may have come and finished it since the read.
      await at(engine.pause, "redrive:row", { rowId: c.rowId });
      if (await queuedOrphan(database.db, c)) {
        pass.report.queuedRows++;
        carry(pass, c);
      }
      continue;
    }
    await healRunning(pass, c);
  }
  // Due waits whose delayed carrier was lost.
  for (const w of await dueWaits(database.db, PASS_LIMIT)) {
    const resumed = await resumeCell(database.db, { ...w, data: { dueWait: true } });
    if (resumed.ok) {
      pass.report.resumed++;
      carry(pass, { tableId: w.tableId, rowId: w.rowId, dispatchId: null });
    }
  }
  await at(engine.pause, "redrive:advance");
  await advanceActive(pass);
  await engine.backend.enqueue(pass.enqueue);
  return pass.report;
}

/**
 * A row with running cells: under its lock (taken only if no live carrier holds it), each
 * lost cell goes back to the queue or, at its MAX_LOSSES-th loss, to `error`.
 */
async function healRunning(pass: Pass, c: Candidate): Promise<void> {
  const { engine, report } = pass;
  const session = await acquireRowLock(engine, c.tableId, c.rowId);
  if (!session) return; // A live carrier holds the row: not an orphan.
  let requeued = false;
  let moreQueued = false;
  try {
    await at(engine.pause, "redrive:row", { rowId: c.rowId });
    for (const cell of c.running) {
      if (await healCell(pass, session.db, c, cell)) requeued = true;
    }
  } finally {
    const released = await session.release(c.dispatchId ? [c.dispatchId] : []);
    // Queued cells now (read as the lock went): a carrier that came while we held the
    // lock left the row to us, and nothing tells its cells from ones whose carrier is
    // still on its way, so they are ours to carry. Not the snapshot's: a row the live
    // carrier finished before we got the lock has none.
    moreQueued = released.moreQueued;
    for (const a of released.advances ?? []) {
      for (const rowId of a.rowIds)
        pass.enqueue.push(carrierSpec({ tableId: c.tableId, rowId, dispatchId: a.dispatchId }));
    }
  }
  if (requeued || moreQueued) {
    if (!requeued) report.queuedRows++;
    carry(pass, c);
  }
}

/** One lost running cell, under its row's lock; true when it went back to the queue. */
async function healCell(
  pass: Pass,
  db: Db,
  c: Candidate,
  cell: Candidate["running"][number],
): Promise<boolean> {
  const { report, engine } = pass;
  const ids = { tableId: c.tableId, rowId: c.rowId, groupId: cell.groupId };
  const ref = {
    rowId: c.rowId,
    groupId: cell.groupId,
    executionId: cell.executionId,
    attempt: cell.attempt,
  };
  // This loss and the ones before it (read with the attempt the writes are fenced
  // on: a cell requeued and claimed again since fails the fence).
  const losses = cell.losses + 1;
  if (losses >= MAX_LOSSES) {
    const w = await failCell(db, {
      ...ref,
      message: `The worker running this cell was lost ${losses} times; run it again`,
      finish: { blockErrors: {} },
    });
    if (w.ok) report.failed++;
    engine.log.warn({ ...ids, attempt: cell.attempt, losses }, "re-drive gave up on a cell");
    return false;
  }
  const w = await requeueCell(db, ref, "lost");
  if (!w.ok) return false;
  report.requeued++;
  engine.log.info({ ...ids, executionId: cell.executionId, losses }, "re-drive requeued an orphan");
  return true;
}

/** Every active dispatch's window slides; a stalled background stamping is enqueued again. */
async function advanceActive(pass: Pass): Promise<void> {
  const { db } = pass.engine.database;
  for (const d of await activeDispatches(db, { stampingIdleMs: 30_000 })) {
    const next = await advanceDispatch(db, d.id);
    pass.report.handedOut += next.rowIds.length;
    for (const rowId of next.rowIds)
      pass.enqueue.push(carrierSpec({ tableId: d.tableId, rowId, dispatchId: d.id }));
    if (d.stampingStalled) {
      pass.report.stampers++;
      pass.enqueue.push(stamperSpec({ tableId: d.tableId, dispatchId: d.id }));
    }
  }
}

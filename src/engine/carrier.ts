/**
 * The row carrier: "drive this row". Invariants: at most one carrier works a row at a
 * time (session advisory lock; contention → exit, the holder drains); each step re-reads
 * schema, row and queued cells, so edits and stamps made meanwhile are seen; a cell is
 * claimed only by a step (the only way into `running`), under the schema version whose
 * group order chose it, and an attempt runs only a cell its step claimed; after unlocking it
 * checks once more for cells stamped while it was releasing and goes again, and when its
 * rounds run out with cells still queued it enqueues the row's next carrier rather than
 * leave them to the re-drive; when done it slides the window of every dispatch whose
 * cells it ran. Auto-run fires only through `autoStamp`, which a Stop covering the row
 * holds: a Stop ends the cascade of every row in its scope. A run triggered with a pending
 * key (trigger.dev's fold of duplicate carriers) clears its entry before it reads the row.
 * The steps of a locked row are the cascade's (cascade.ts). Each row it drives is a span
 * of its own (a new trace, or the child of trigger.dev's run span in a task) linked to the
 * span of the run that handed the row out (src/tracing/run-links.ts).
 *
 * Statements per row with n cells: a share of a batched lock, n + 1 steps (each writes
 * the last attempt's terminal state and claims the next cell; batched with other
 * carriers' steps; one more when the step had no group order to claim under: the first
 * step of a table in this process, or after a schema edit), a share of a batched
 * unlock, and the window slide.
 */
import { type CarrierPayload, carrierSpec, type TaskContext } from "@/backends/port";
import { resumeCell } from "@/store/cells/resume";
import { advanceDispatch } from "@/store/dispatches/advance";
import { readTraceContext } from "@/store/dispatches/trace-context";
import { clearPendingCarrier } from "@/store/pending-carriers/entries";
import { runLinks } from "@/tracing/run-links";
import { tracingOn, withSpan } from "@/tracing/spans";
import { cascade } from "./cascade";
import type { Engine } from "./handle";
import { at } from "./race-points";
import { acquireRowLock } from "./row-lock";

export type CarrierOutcome = "done" | "contended";

/** Re-acquire rounds after release before leaving the rest to the next carrier. */
const MAX_ROUNDS = 5;

/** How long one carrier job keeps taking the next handed-out row itself before queueing it. */
const CHAIN_MS = 5 * 60_000;

/**
 * Drives the row, slides the window of every dispatch it ran cells for, and then takes
 * one of the rows just handed out itself instead of queueing it: a job round trip
 * through the queue saved per row, while the window still bounds what is in flight.
 */
export async function runCarrier(
  engine: Engine,
  payload: CarrierPayload,
  ctx: TaskContext,
): Promise<CarrierOutcome> {
  engine.metrics?.carriersRunning.inc();
  try {
    return await carry(engine, payload, ctx);
  } finally {
    engine.metrics?.carriersRunning.dec();
  }
}

async function carry(
  engine: Engine,
  payload: CarrierPayload,
  ctx: TaskContext,
): Promise<CarrierOutcome> {
  const started = Date.now();
  let current: CarrierPayload | undefined = payload;
  let outcome: CarrierOutcome = "done";
  let first = true;
  // Before the row is read: an enqueue that folded into this run (trigger.dev) stamped its
  // cells before it saw the entry, so the reads below see them; one after this starts a run.
  if (payload.pendingKey)
    await clearPendingCarrier(engine.database.db, {
      rowId: payload.rowId,
      runKey: payload.pendingKey,
    });
  while (current) {
    const { contended, handedOut, moreQueued } = await tracedDriveRow(engine, current, ctx);
    if (first) outcome = contended ? "contended" : "done";
    await at(engine.pause, "carrier:released", { rowId: current.rowId });
    // Work left on the row (shutdown, or the rounds ran out while cells kept arriving):
    // hand it to the next carrier now rather than leave it to the re-drive.
    if (moreQueued) await engine.backend.enqueue([carrierSpec(withoutPendingKey(current))]);
    first = false;
    let continuation: CarrierPayload | undefined;
    for (const [dispatchId, rowIds] of handedOut) {
      const rows = rowIds.map((rowId) => ({
        tableId: current?.tableId ?? payload.tableId,
        rowId,
        dispatchId,
      }));
      if (
        engine.chain !== false &&
        !continuation &&
        !ctx.signal.aborted &&
        Date.now() - started < CHAIN_MS
      )
        continuation = rows.shift();
      if (rows.length > 0) await engine.backend.enqueue(rows.map(carrierSpec));
    }
    current = continuation;
  }
  return outcome;
}

/** A payload to enqueue again: the backend gives the next run its own pending key. */
function withoutPendingKey(payload: CarrierPayload): CarrierPayload {
  const { pendingKey: _, ...rest } = payload;
  return rest;
}

/** `driveRow` in the row's carrier span, linked to its run's span. */
async function tracedDriveRow(
  engine: Engine,
  payload: CarrierPayload,
  ctx: TaskContext,
): ReturnType<typeof driveRow> {
  if (!tracingOn()) return driveRow(engine, payload, ctx);
  const { db } = engine.database;
  const links = await runLinks(payload.dispatchId, (id) => readTraceContext(db, id));
  return withSpan(
    "carrier",
    () => ({
      "cellflow.table.id": payload.tableId,
      "cellflow.row.id": payload.rowId,
      "cellflow.carrier.id": ctx.runId,
      ...(payload.dispatchId ? { "cellflow.run.id": payload.dispatchId } : {}),
    }),
    async (span) => {
      const driven = await driveRow(engine, payload, ctx);
      span.setAttribute("cellflow.carrier.contended", driven.contended);
      return driven;
    },
    { links },
  );
}

/**
 * The row lock, the cascade, and re-acquiring for cells stamped while we released.
 * Returns the rows each dispatch's window handed out meanwhile.
 */
async function driveRow(
  engine: Engine,
  payload: CarrierPayload,
  ctx: TaskContext,
): Promise<{ contended: boolean; handedOut: Map<string, string[]>; moreQueued: boolean }> {
  const log = engine.log.child({
    tableId: payload.tableId,
    rowId: payload.rowId,
    runId: ctx.runId,
  });
  engine.progress?.({ kind: "row", tableId: payload.tableId, rowId: payload.rowId });
  const dispatchIds = new Set<string>(payload.dispatchId ? [payload.dispatchId] : []);
  const handedOut = new Map<string, string[]>();
  const hand = (dispatchId: string, rowIds: string[]) =>
    handedOut.set(dispatchId, [...(handedOut.get(dispatchId) ?? []), ...rowIds]);
  let contended = false;
  let advanced = false;
  let more = false;
  if (payload.resumeWait) {
    // paused → queued once due (a no-op when early, stopped, or already resumed).
    await resumeCell(engine.database.db, {
      tableId: payload.tableId,
      rowId: payload.rowId,
      ...payload.resumeWait,
      data: { dueWait: true },
    });
  }
  const rounds = engine.maxRounds ?? MAX_ROUNDS;
  for (let round = 0; round < rounds; round++) {
    const session = await acquireRowLock(engine, payload.tableId, payload.rowId);
    if (!session) {
      log.debug("row lock held by another carrier; it drains the row");
      contended = round === 0;
      // The holder drains what is queued: nothing is left for us to hand on.
      more = false;
      break;
    }
    try {
      await cascade(engine, { session, payload, ctx, dispatchIds, log });
    } finally {
      await at(engine.pause, "carrier:release", { rowId: payload.rowId });
      const released = await session.release([...dispatchIds]);
      more = released.moreQueued;
      advanced = released.advances !== null;
      for (const a of released.advances ?? []) hand(a.dispatchId, a.rowIds);
    }
    if (ctx.signal.aborted || !more) break;
  }
  // Unlock could not advance (or the lock was contended): slide the windows on their own.
  if (!advanced) {
    for (const id of dispatchIds) hand(id, (await advanceDispatch(engine.database.db, id)).rowIds);
  }
  return { contended, handedOut, moreQueued: more };
}

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
 *
 * Statements per row with n cells: a share of a batched lock, n + 1 steps (each writes
 * the last attempt's terminal state and claims the next cell; batched with other
 * carriers' steps; one more when the step had no group order to claim under: the first
 * step of a table in this process, or after a schema edit), a share of a batched
 * unlock, and the window slide.
 */
import type { Database } from "@db/client";
import {
  type CarrierPayload,
  carrierSpec,
  type TaskBackend,
  type TaskContext,
} from "@/backends/port";
import type { Logger } from "@/config/log";
import { nextAutoGroup } from "@/domain/auto-run";
import { formatDuration } from "@/domain/durations";
import { upstreamGroups } from "@/domain/table-schema";
import { DeadlineError, InterruptedError, isInterrupted } from "@/errors";
import { wakeTable } from "@/events/waker";
import { creditsExhausted, planLimits } from "@/limits/plans";
import type { RateLimiter } from "@/limits/rate/port";
import { autoStamp } from "@/store/cells/auto-stamp";
import { failQueuedCell } from "@/store/cells/fail-queued";
import { failCell } from "@/store/cells/finish";
import { requeueCell } from "@/store/cells/requeue";
import { resumeCell } from "@/store/cells/resume";
import type { RowStepInput } from "@/store/cells/row-step";
import { advanceDispatch } from "@/store/dispatches/advance";
import { clearPendingCarrier } from "@/store/pending-carriers/entries";
import { runAttempt } from "./attempt";
import { groupOrderOf, lastGroupOrder, tableSchemaOf } from "./definitions";
import { at, type Pause } from "./race-points";
import { acquireRowLock, type RowSession } from "./row-lock";
import { stepBatcherOf } from "./step-batcher";

export interface EngineDeps {
  database: Database;
  backend: TaskBackend;
  log: Logger;
  /** The process's rate limiter, in front of every paid provider call (src/runtime/engine.ts). */
  limiter: RateLimiter;
  /** Reuse paid enrichments' answers this young (CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS; 0: off). */
  enrichmentCacheTtlMs: number;
  /**
   * Take a row the window just handed out in this job instead of queueing it (default
   * true). Off on trigger.dev, where a run is one row: its tags, metadata and cancel
   * then mean that row.
   */
  chain?: boolean;
  /**
   * Refuse paid and rate-limited calls with a per-process limiter (trigger.dev, where
   * each run is its own process and a per-process limit multiplies by the runs).
   */
  requireSharedLimiter?: boolean;
  /**
   * Attempts read their cell's tombstone this often (trigger.dev: the Stop's notice does
   * not reach a run's process, and its run is cancelled only when nothing else rides on it).
   */
  stopCheckMs?: number;
  /** What the carrier is doing, for a dashboard (trigger.dev run metadata). */
  progress?: (event: CarrierProgress) => void;
  /** Tests: hold the carrier between its statements (see race-points.ts). */
  pause?: Pause;
  /** Re-acquire rounds after release (default MAX_ROUNDS; tests make it small). */
  maxRounds?: number;
}

export type CarrierProgress =
  | { kind: "row"; tableId: string; rowId: string }
  | { kind: "attempt"; groupId: string; executionId: string; end?: string };

export type CarrierOutcome = "done" | "contended";

/** Re-acquire rounds after release before leaving the rest to the next carrier. */
const MAX_ROUNDS = 5;

/**
 * Steps in a row that may claim nothing while cells are queued (the first step of a table
 * in this process has no group order to claim under) before the carrier hands the row on.
 */
const MAX_CLAIMLESS_STEPS = 3;

/** How long one carrier job keeps taking the next handed-out row itself before queueing it. */
const CHAIN_MS = 5 * 60_000;

/**
 * Drives the row, slides the window of every dispatch it ran cells for, and then takes
 * one of the rows just handed out itself instead of queueing it: a job round trip
 * through the queue saved per row, while the window still bounds what is in flight.
 */
export async function runCarrier(
  deps: EngineDeps,
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
    await clearPendingCarrier(deps.database.db, {
      rowId: payload.rowId,
      runKey: payload.pendingKey,
    });
  while (current) {
    const { contended, handedOut, moreQueued } = await driveRow(deps, current, ctx);
    if (first) outcome = contended ? "contended" : "done";
    await at(deps.pause, "carrier:released", { rowId: current.rowId });
    // Work left on the row (shutdown, or the rounds ran out while cells kept arriving):
    // hand it to the next carrier now rather than leave it to the re-drive.
    if (moreQueued) await deps.backend.enqueue([carrierSpec(withoutPendingKey(current))]);
    first = false;
    let continuation: CarrierPayload | undefined;
    for (const [dispatchId, rowIds] of handedOut) {
      const rows = rowIds.map((rowId) => ({
        tableId: current?.tableId ?? payload.tableId,
        rowId,
        dispatchId,
      }));
      if (
        deps.chain !== false &&
        !continuation &&
        !ctx.signal.aborted &&
        Date.now() - started < CHAIN_MS
      )
        continuation = rows.shift();
      if (rows.length > 0) await deps.backend.enqueue(rows.map(carrierSpec));
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

/**
 * The row lock, the cascade, and re-acquiring for cells stamped while we released.
 * Returns the rows each dispatch's window handed out meanwhile.
 */
async function driveRow(
  deps: EngineDeps,
  payload: CarrierPayload,
  ctx: TaskContext,
): Promise<{ contended: boolean; handedOut: Map<string, string[]>; moreQueued: boolean }> {
  const log = deps.log.child({ tableId: payload.tableId, rowId: payload.rowId, runId: ctx.runId });
  deps.progress?.({ kind: "row", tableId: payload.tableId, rowId: payload.rowId });
  const dispatchIds = new Set<string>(payload.dispatchId ? [payload.dispatchId] : []);
  const handedOut = new Map<string, string[]>();
  const hand = (dispatchId: string, rowIds: string[]) =>
    handedOut.set(dispatchId, [...(handedOut.get(dispatchId) ?? []), ...rowIds]);
  let contended = false;
  let advanced = false;
  let more = false;
  if (payload.resumeWait) {
    // paused → queued once due (a no-op when early, stopped, or already resumed).
    await resumeCell(deps.database.db, {
      tableId: payload.tableId,
      rowId: payload.rowId,
      ...payload.resumeWait,
      data: { dueWait: true },
    });
  }
  const rounds = deps.maxRounds ?? MAX_ROUNDS;
  for (let round = 0; round < rounds; round++) {
    const session = await acquireRowLock(deps.database, payload.tableId, payload.rowId);
    if (!session) {
      log.debug("row lock held by another carrier; it drains the row");
      contended = round === 0;
      // The holder drains what is queued: nothing is left for us to hand on.
      more = false;
      break;
    }
    try {
      await cascade(deps, session, payload, ctx, dispatchIds, log);
    } finally {
      await at(deps.pause, "carrier:release", { rowId: payload.rowId });
      const released = await session.release([...dispatchIds]);
      more = released.moreQueued;
      advanced = released.advances !== null;
      for (const a of released.advances ?? []) hand(a.dispatchId, a.rowIds);
    }
    if (ctx.signal.aborted || !more) break;
  }
  // Unlock could not advance (or the lock was contended): slide the windows on their own.
  if (!advanced) {
    for (const id of dispatchIds) hand(id, (await advanceDispatch(deps.database.db, id)).rowIds);
  }
  return { contended, handedOut, moreQueued: more };
}

const interrupted = (signal: AbortSignal) => signal.aborted && isInterrupted(signal.reason);

async function cascade(
  deps: EngineDeps,
  session: RowSession,
  payload: CarrierPayload,
  ctx: TaskContext,
  dispatchIds: Set<string>,
  log: Logger,
): Promise<void> {
  const { tableId, rowId } = payload;
  let limits: ReturnType<typeof planLimits> | undefined;
  let deadline: AbortSignal | undefined;
  const stopped = new AbortController();
  // Reasons are built only when they happen: an Error captures a stack, and this runs per row.
  const onStop = (reason: () => unknown) => () => {
    if (!stopped.signal.aborted) stopped.abort(reason());
  };
  const onShutdown = onStop(() => new InterruptedError());
  const onLost = onStop(
    () => new DeadlineError("The worker lost its database session during the run; run it again"),
  );
  ctx.signal.addEventListener("abort", onShutdown, { once: true });
  session.lost.addEventListener("abort", onLost, { once: true });
  // A stop that came before the listener (while the lock was taken, or before the job
  // began) fires no event: without this, the attempt ran to its end during shutdown.
  if (ctx.signal.aborted) onShutdown();
  let lastGroup: string | undefined;
  let pending: RowStepInput["finish"];
  let claimless = 0;
  try {
    for (;;) {
      await at(deps.pause, "carrier:step", { rowId });
      const hint = stopped.signal.aborted ? undefined : lastGroupOrder(tableId);
      // With the steps of the process's other carriers, in one statement (step-batcher.ts).
      const { step, claimed, finished, eventsWritten } = await stepBatcherOf(session.db).step({
        tableId,
        rowId,
        finish: pending,
        claim: hint && { ...hint, runId: ctx.runId },
      });
      if (eventsWritten) wakeTable(deps.database, tableId);
      if (pending && finished && !finished.ok)
        log.debug({ groupId: pending.groupId, reason: finished.reason }, "terminal write lost");
      pending = undefined;
      if (!step?.data) return;
      const schema = tableSchemaOf(tableId, step.schemaVersion, step.schema);
      const order = groupOrderOf(tableId, step.schemaVersion, schema);
      if (!limits) {
        limits = planLimits(step.plan);
        const ms = limits.cascadeTimeoutMs;
        deadline = AbortSignal.timeout(ms);
        deadline.addEventListener(
          "abort",
          onStop(() => new DeadlineError(`The row ran past its ${formatDuration(ms)} limit`)),
          { once: true },
        );
      }
      const rank = new Map(order.map((g, i) => [g, i]));
      const next =
        claimed ??
        [...step.queued].sort(
          (x, y) => (rank.get(x.groupId) ?? 1e9) - (rank.get(y.groupId) ?? 1e9),
        )[0];
      if (!next) {
        // Explicit work done: fire the next auto-run group this row now qualifies for
        // (never the one that just finished), then go round to run it.
        const auto = stopped.signal.aborted
          ? undefined
          : nextAutoGroup(schema, step.data, new Set(step.present), lastGroup);
        if (!auto) return;
        const group = schema.groups.find((g) => g.id === auto);
        // Credits used up: auto-run does not start paid work until the month turns.
        if (group?.kind === "enrichment" && creditsExhausted(step.plan, step.creditsCommitted))
          return;
        await at(deps.pause, "carrier:auto", { rowId, groupId: auto });
        // Refused (0) when a Stop covers the row: the cascade ends here.
        const stamped = await autoStamp(session.db, {
          tableId,
          rowId,
          groupId: auto,
          dependsOn: group?.dependsOn ?? [],
          upstream: upstreamGroups(schema, auto),
        });
        if (stamped === 0) return;
        lastGroup = undefined;
        continue;
      }
      if (next.dispatchId) dispatchIds.add(next.dispatchId);
      if (interrupted(stopped.signal)) {
        // Shutting down: the claimed cell goes back to the queue, the queued ones stay,
        // and the row gets a new carrier (see runCarrier), elsewhere or after a restart.
        if (claimed)
          await requeueCell(
            session.db,
            {
              rowId,
              groupId: claimed.groupId,
              executionId: claimed.executionId,
              attempt: claimed.attempt,
            },
            "handed_back",
          );
        return;
      }
      if (stopped.signal.aborted) {
        // Deadline or lost session before this cell could start: say so on every waiting cell.
        const message =
          stopped.signal.reason instanceof Error ? stopped.signal.reason.message : "stopped";
        if (claimed)
          await failCell(session.db, {
            rowId,
            groupId: claimed.groupId,
            executionId: claimed.executionId,
            attempt: claimed.attempt,
            message,
            finish: { blockErrors: {} },
          });
        for (const cell of step.queued) {
          await failQueuedCell(session.db, {
            rowId,
            groupId: cell.groupId,
            executionId: cell.executionId,
            message,
          });
          if (cell.dispatchId) dispatchIds.add(cell.dispatchId);
        }
        return;
      }
      if (!claimed) {
        // Cells are queued but the step claimed none: it had no group order for the table
        // (its first step here) or one of an older schema version, or a write that
        // committed after its read took the cell. Go round: the next step claims under the
        // order just read. A cell starts running only through a step's claim.
        if (++claimless <= MAX_CLAIMLESS_STEPS) continue;
        // Something keeps taking the cells from under the claim: the release's read of
        // what is queued hands the row on (driveRow).
        log.warn({ queued: step.queued.length }, "steps kept claiming nothing; handing the row on");
        return;
      }
      claimless = 0;
      lastGroup = claimed.groupId;
      deps.progress?.({
        kind: "attempt",
        groupId: claimed.groupId,
        executionId: claimed.executionId,
      });
      const result = await runAttempt({
        db: session.db,
        log,
        tableId,
        rowId,
        schema,
        data: step.data,
        groupId: claimed.groupId,
        executionId: claimed.executionId,
        attempt: claimed.attempt,
        resumable: claimed.resumable,
        cascadeSignal: stopped.signal,
        attemptTimeoutMs: limits.attemptTimeoutMs,
        workflows: step.workflows,
        workspaceId: step.workspaceId,
        plan: step.plan,
        dispatchId: claimed.dispatchId,
        limiter: deps.limiter,
        enrichmentCacheTtlMs: deps.enrichmentCacheTtlMs,
        requireSharedLimiter: deps.requireSharedLimiter ?? false,
        stopCheckMs: deps.stopCheckMs,
      });
      deps.progress?.({
        kind: "attempt",
        groupId: claimed.groupId,
        executionId: claimed.executionId,
        end: result.end,
      });
      const ref = { executionId: claimed.executionId, attempt: claimed.attempt };
      if (result.kind === "interrupted")
        await requeueCell(session.db, { rowId, groupId: claimed.groupId, ...ref }, "handed_back");
      // A wait that paused comes back by itself: a delayed carrier resumes it when due.
      if (result.kind === "paused" && result.resumeAt !== undefined)
        await deps.backend.enqueue([
          {
            ...carrierSpec({
              tableId,
              rowId,
              resumeWait: { groupId: claimed.groupId, executionId: claimed.executionId },
            }),
            idempotencyKey: `resume:${claimed.executionId}`,
            delayMs: Math.max(0, result.resumeAt - Date.now()),
          },
        ]);
      // The terminal write rides the next step's statement.
      if (result.kind === "write")
        pending = { groupId: claimed.groupId, ref, end: result.terminal };
      log.debug(
        { groupId: claimed.groupId, executionId: claimed.executionId, end: result.end },
        "attempt ended",
      );
    }
  } finally {
    ctx.signal.removeEventListener("abort", onShutdown);
    session.lost.removeEventListener("abort", onLost);
  }
}

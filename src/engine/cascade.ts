/**
 * The cascade of one row, by the carrier holding its lock (carrier.ts): step after step,
 * each writes the last attempt's terminal state and claims the next cell in one batched
 * statement (step-batcher.ts), then runs the claimed cell's attempt. Invariants: each step
 * re-reads schema, row and queued cells, so edits and stamps made meanwhile are seen; a
 * cell is claimed only by a step (the only way into `running`), under the schema version
 * whose group order chose it, and an attempt runs only a cell its step claimed; auto-run
 * fires only through `autoStamp`, which a Stop covering the row holds (a Stop ends the
 * cascade); a claimed cell whose group has a run condition is judged before its attempt
 * does anything (not met: it ends `condition_not_met` and the cascade goes on to the row's
 * next cell); a shutdown hands the claimed cell back to the queue, and the row's deadline
 * or a lost lock session fails the cells still waiting, each with the reason.
 */
import { type CarrierPayload, carrierSpec, type TaskContext } from "@/backends/port";
import type { Logger } from "@/config/log";
import type { TableSchema } from "@/contracts/table";
import { nextAutoGroup } from "@/domain/auto-run";
import { formatDuration } from "@/domain/durations";
import { isLookupGroup, upstreamGroups } from "@/domain/table-schema";
import { runIfOf } from "@/domain/where";
import { DeadlineError, InterruptedError, isInterrupted } from "@/errors";
import { creditsExhausted, type PlanLimits, planLimits } from "@/limits/plans";
import { autoStamp } from "@/store/cells/auto-stamp";
import { failQueuedCell } from "@/store/cells/fail-queued";
import { failCell } from "@/store/cells/finish";
import { requeueCell } from "@/store/cells/requeue";
import type { ClaimedCell, RowStepInput } from "@/store/cells/row-step";
import { skipByCondition } from "@/store/cells/skip-by-condition";
import type { CascadeStep } from "@/store/engine-reads";
import { runAttempt } from "./attempt";
import type { Engine } from "./handle";
import { at } from "./race-points";
import type { RowDeadline } from "./row-deadline";
import type { RowSession } from "./row-lock";

/**
 * Steps in a row that may claim nothing while cells are queued (the first step of a table
 * in this process has no group order to claim under) before the carrier hands the row on.
 */
const MAX_CLAIMLESS_STEPS = 3;

/** The carrier's request for one locked row. */
export interface CascadeRequest {
  session: RowSession;
  payload: CarrierPayload;
  ctx: TaskContext;
  /** The dispatches whose cells it ran or failed: their windows slide on release. */
  dispatchIds: Set<string>;
  log: Logger;
}

/** The state of one cascade, from step to step. */
interface Cascade extends CascadeRequest {
  readonly engine: Engine;
  readonly tableId: string;
  readonly rowId: string;
  /** Aborted by a shutdown, the row's deadline or the lost lock session. */
  readonly stopped: AbortController;
  limits: PlanLimits | undefined;
  /** The row's deadline, armed at the first step and disarmed when the cascade ends. */
  deadline: RowDeadline | undefined;
  lastGroup: string | undefined;
  /** The last attempt's terminal write: it rides the next step's statement. */
  pending: RowStepInput["finish"];
  claimless: number;
}

/** A step's read of a row that is still there. */
type RowRead = CascadeStep & { data: Record<string, unknown> };
const rowIsThere = (step: CascadeStep | null): step is RowRead => !!step?.data;

const interrupted = (signal: AbortSignal) => signal.aborted && isInterrupted(signal.reason);

/** Aborts the cascade once, with a reason built only when it happens (an Error captures a stack). */
const stopWith = (c: Cascade, reason: () => unknown) => () => {
  if (!c.stopped.signal.aborted) c.stopped.abort(reason());
};

export async function cascade(engine: Engine, req: CascadeRequest): Promise<void> {
  const c: Cascade = {
    ...req,
    engine,
    tableId: req.payload.tableId,
    rowId: req.payload.rowId,
    stopped: new AbortController(),
    limits: undefined,
    deadline: undefined,
    lastGroup: undefined,
    pending: undefined,
    claimless: 0,
  };
  const onShutdown = stopWith(c, () => new InterruptedError());
  const onLost = stopWith(
    c,
    () => new DeadlineError("The worker lost its database session during the run; run it again"),
  );
  c.ctx.signal.addEventListener("abort", onShutdown, { once: true });
  c.session.lost.addEventListener("abort", onLost, { once: true });
  // A stop that came before the listener (while the lock was taken, or before the job
  // began) fires no event: without this, the attempt ran to its end during shutdown.
  if (c.ctx.signal.aborted) onShutdown();
  try {
    while (await step(c));
  } finally {
    c.deadline?.disarm();
    c.ctx.signal.removeEventListener("abort", onShutdown);
    c.session.lost.removeEventListener("abort", onLost);
  }
}

/** One step and what it leads to; false when the cascade ends. */
async function step(c: Cascade): Promise<boolean> {
  const { engine, tableId, rowId, stopped } = c;
  await at(engine.pause, "carrier:step", { rowId });
  // Held here, not looked up again after the read: the read leaves out the schema of the
  // version we say we hold, and the cache may have let it go meanwhile.
  const seen = engine.definitions.lastGroupOrder(tableId);
  const hint = stopped.signal.aborted ? undefined : seen;
  // With the steps of the process's other carriers, in one statement (step-batcher.ts).
  const { step, claimed, finished, eventsWritten } = await engine.steps.step({
    tableId,
    rowId,
    finish: c.pending,
    claim: hint && { schemaVersion: hint.schemaVersion, order: hint.order, runId: c.ctx.runId },
    ...(seen ? { knownSchemaVersion: seen.schemaVersion } : {}),
  });
  if (eventsWritten) engine.waker.wake(tableId);
  if (c.pending && finished && !finished.ok)
    c.log.debug({ groupId: c.pending.groupId, reason: finished.reason }, "terminal write lost");
  c.pending = undefined;
  if (!rowIsThere(step)) return false;
  const schema =
    step.schema === null && seen?.schemaVersion === step.schemaVersion
      ? seen.schema
      : engine.definitions.tableSchema(tableId, step.schemaVersion, step.schema);
  const order = engine.definitions.groupOrder(tableId, step.schemaVersion, schema);
  const limits = c.limits ?? startDeadline(c, step);
  const rank = new Map(order.map((g, i) => [g, i]));
  const next =
    claimed ??
    [...step.queued].sort((x, y) => (rank.get(x.groupId) ?? 1e9) - (rank.get(y.groupId) ?? 1e9))[0];
  if (!next) return autoRun(c, step, schema);
  if (next.dispatchId) c.dispatchIds.add(next.dispatchId);
  if (interrupted(stopped.signal)) {
    await handBack(c, claimed);
    return false;
  }
  if (stopped.signal.aborted) {
    await failWaiting(c, step, claimed);
    return false;
  }
  if (!claimed) return claimedNothing(c, step);
  engine.metrics?.claimed(claimed.queuedSeconds);
  c.claimless = 0;
  c.lastGroup = claimed.groupId;
  if (await endedByCondition(c, schema, claimed)) return true;
  await attemptCell(c, step, schema, claimed, limits);
  return true;
}

/**
 * The claimed cell's run condition, judged before its attempt does anything: true when the
 * cell needs no attempt (the condition did not hold and the cell ended `condition_not_met`,
 * or the attempt lost its cell meanwhile). An execution that already recorded state (a
 * resumed wait, an approval) was judged when it first ran: it goes on.
 */
async function endedByCondition(
  c: Cascade,
  schema: TableSchema,
  claimed: ClaimedCell,
): Promise<boolean> {
  const group = schema.groups.find((g) => g.id === claimed.groupId);
  if (!group?.runIf?.length || claimed.resumable) return false;
  const ref = {
    rowId: c.rowId,
    groupId: claimed.groupId,
    executionId: claimed.executionId,
    attempt: claimed.attempt,
  };
  const conditions = runIfOf(schema, group);
  if (!conditions.ok) {
    await failCell(c.session.db, {
      ...ref,
      message: `The group's run condition is not valid: ${conditions.reason.message}`,
      finish: { blockErrors: {} },
    });
    return true;
  }
  const judged = await skipByCondition(c.session.db, {
    ...ref,
    conditions: conditions.value,
    outputColumns: group.outputs.map((o) => o.columnId),
  });
  if (judged.kind === "holds") return false;
  if (judged.kind === "not_met") c.engine.waker.wake(c.tableId);
  else c.log.debug({ groupId: claimed.groupId, reason: judged.reason }, "run condition: cell lost");
  return true;
}

/** The row's deadline, from its plan, armed at its first step. */
function startDeadline(c: Cascade, step: RowRead): PlanLimits {
  const limits = planLimits(step.plan);
  c.limits = limits;
  const ms = limits.cascadeTimeoutMs;
  c.deadline = c.engine.deadlines.arm(
    ms,
    stopWith(c, () => new DeadlineError(`The row ran past its ${formatDuration(ms)} limit`)),
  );
  return limits;
}

/**
 * Explicit work done: fires the next auto-run group this row now qualifies for (never
 * the one that just finished); true to go round and run it.
 */
async function autoRun(c: Cascade, step: RowRead, schema: TableSchema): Promise<boolean> {
  const auto = c.stopped.signal.aborted
    ? undefined
    : nextAutoGroup(schema, step.data, new Set(step.present), c.lastGroup);
  if (!auto) return false;
  const group = schema.groups.find((g) => g.id === auto);
  // Credits used up: auto-run does not start paid work until the month turns.
  if (group && isLookupGroup(group) && creditsExhausted(step.plan, step.creditsCommitted))
    return false;
  await at(c.engine.pause, "carrier:auto", { rowId: c.rowId, groupId: auto });
  // Refused (0) when a Stop covers the row: the cascade ends here.
  const stamped = await autoStamp(c.session.db, {
    tableId: c.tableId,
    rowId: c.rowId,
    groupId: auto,
    dependsOn: group?.dependsOn ?? [],
    upstream: upstreamGroups(schema, auto),
  });
  if (stamped === 0) return false;
  c.lastGroup = undefined;
  return true;
}

/**
 * Shutting down: the claimed cell goes back to the queue, the queued ones stay, and the
 * row gets a new carrier (see runCarrier), elsewhere or after a restart.
 */
async function handBack(c: Cascade, claimed: ClaimedCell | null): Promise<void> {
  if (!claimed) return;
  await requeueCell(
    c.session.db,
    {
      rowId: c.rowId,
      groupId: claimed.groupId,
      executionId: claimed.executionId,
      attempt: claimed.attempt,
    },
    "handed_back",
  );
}

/** Deadline or lost session before this cell could start: says so on every waiting cell. */
async function failWaiting(c: Cascade, step: RowRead, claimed: ClaimedCell | null): Promise<void> {
  const reason = c.stopped.signal.reason;
  const message = reason instanceof Error ? reason.message : "stopped";
  if (claimed)
    await failCell(c.session.db, {
      rowId: c.rowId,
      groupId: claimed.groupId,
      executionId: claimed.executionId,
      attempt: claimed.attempt,
      message,
      finish: { blockErrors: {} },
    });
  for (const cell of step.queued) {
    await failQueuedCell(c.session.db, {
      rowId: c.rowId,
      groupId: cell.groupId,
      executionId: cell.executionId,
      message,
    });
    if (cell.dispatchId) c.dispatchIds.add(cell.dispatchId);
  }
}

/**
 * Cells are queued but the step claimed none: it had no group order for the table (its
 * first step here) or one of an older schema version, or a write that committed after its
 * read took the cell. Goes round (true): the next step claims under the order just read.
 * A cell starts running only through a step's claim.
 */
function claimedNothing(c: Cascade, step: RowRead): boolean {
  if (++c.claimless <= MAX_CLAIMLESS_STEPS) return true;
  // Something keeps taking the cells from under the claim: the release's read of what is
  // queued hands the row on (driveRow).
  c.log.warn({ queued: step.queued.length }, "steps kept claiming nothing; handing the row on");
  return false;
}

/** Runs the claimed cell's attempt and settles what it leaves: a hand-back, a resume, a write. */
async function attemptCell(
  c: Cascade,
  step: RowRead,
  schema: TableSchema,
  claimed: ClaimedCell,
  limits: PlanLimits,
): Promise<void> {
  const { engine, tableId, rowId } = c;
  const { groupId, executionId } = claimed;
  engine.progress?.({ kind: "attempt", groupId, executionId });
  const began = performance.now();
  const result = await runAttempt(engine, {
    tableId,
    rowId,
    cell: claimed,
    step,
    schema,
    cascadeSignal: c.stopped.signal,
    attemptTimeoutMs: limits.attemptTimeoutMs,
    log: c.log,
  });
  engine.progress?.({ kind: "attempt", groupId, executionId, end: result.end });
  const kind = schema.groups.find((g) => g.id === groupId)?.kind ?? "unknown";
  engine.metrics?.attemptEnded(kind, result.end, (performance.now() - began) / 1000);
  const ref = { executionId, attempt: claimed.attempt };
  if (result.kind === "interrupted")
    await requeueCell(c.session.db, { rowId, groupId, ...ref }, "handed_back");
  // A wait that paused comes back by itself: a delayed carrier resumes it when due.
  if (result.kind === "paused" && result.resumeAt !== undefined)
    await engine.backend.enqueue([
      {
        ...carrierSpec({ tableId, rowId, resumeWait: { groupId, executionId } }),
        idempotencyKey: `resume:${executionId}`,
        delayMs: Math.max(0, result.resumeAt - Date.now()),
      },
    ]);
  // The terminal write rides the next step's statement.
  if (result.kind === "write") c.pending = { groupId, ref, end: result.terminal };
  c.log.debug({ groupId, executionId, end: result.end }, "attempt ended");
}

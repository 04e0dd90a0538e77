/**
 * One attempt: one group on one row, by the carrier holding the row lock, of a cell the
 * carrier's step already claimed (`row-step.ts`: the only way into `running`). Invariant:
 * every write is fenced by the execution id and the claim's attempt number (progress,
 * checkpoints, pause, terminal); the first write that is rejected ends the attempt at
 * once, and an attempt that ends because of a Stop writes nothing (the tombstone is
 * already there). A Stop reaches it through its abort signal (the process's cancel
 * registry), its next fenced write, or, where the notice does not reach (trigger.dev), a
 * read of its tombstone every `stopCheckMs`. The terminal write is returned, not made:
 * the carrier sends it with its next step, fenced the same way. Each attempt is a span
 * (the child of its carrier's) carrying the cell's ids and how it ended.
 */
import type { Logger } from "@/config/log";
import type { EnrichmentGroup, Group } from "@/contracts/table";
import { formatDuration } from "@/domain/durations";
import { getEnrichment } from "@/enrichments/registry";
import {
  DeadlineError,
  isCancelled,
  isDeadline,
  isInterrupted,
  isLostAuthority,
  isRowBudgetExceeded,
  isSharedLimiterRequired,
  isUsageLimitHalt,
  LostAuthority,
} from "@/errors";
import { WorkflowError } from "@/execution/executor";
import { cellDetails } from "@/execution/finished-blocks";
import { redact, redactText } from "@/security/redact";
import { tracingOn, withSpan } from "@/tracing/spans";
import {
  type AttemptRequest,
  type AttemptResult,
  blankOutputs,
  ended,
  failure,
  type OpenAttempt,
  write,
} from "./attempt-outcome";
import { registerAttempt, watchTombstone } from "./cancellation";
import { sweepLeftChildren } from "./child-lineage";
import { enrichmentTerminal } from "./enrichment-attempt";
import type { Engine } from "./handle";
import { llmCalls } from "./llm-calls";
import { paidCalls } from "./paid-calls";
import { ProgressWriter } from "./progress";
import { waterfallAttempt } from "./waterfall-attempt";
import { workflowAttempt } from "./workflow-attempt";

export function runAttempt(engine: Engine, req: AttemptRequest): Promise<AttemptResult> {
  // Per cell: untraced, not even the span's closures.
  if (!tracingOn()) return attemptOnce(engine, req);
  return withSpan(
    "attempt",
    () => ({
      "cellflow.table.id": req.tableId,
      "cellflow.row.id": req.rowId,
      "cellflow.group.id": req.cell.groupId,
      "cellflow.execution.id": req.cell.executionId,
      "cellflow.attempt": req.cell.attempt,
      ...(req.cell.dispatchId ? { "cellflow.run.id": req.cell.dispatchId } : {}),
    }),
    async (span) => {
      const result = await attemptOnce(engine, req);
      span.setAttribute("cellflow.attempt.end", result.end);
      return result;
    },
  );
}

async function attemptOnce(engine: Engine, req: AttemptRequest): Promise<AttemptResult> {
  const { groupId, executionId } = req.cell;
  const log = req.log.child({ groupId, executionId });
  const group = req.schema.groups.find((g) => g.id === groupId);
  if (!group) return failure("The group was removed from the table before it ran");
  const run = openAttempt(engine, req, group, log);
  try {
    if (run.controller.signal.aborted) throw run.controller.signal.reason;
    if (group.kind === "enrichment") return await enrichmentAttempt(req, run, group);
    if (group.kind === "waterfall") return await waterfallAttempt(req, run, group);
    return await workflowAttempt(engine, req, run, group);
  } catch (err) {
    return endedBy(run, err);
  } finally {
    await closeAttempt(req, run);
  }
}

/** Registers the attempt and arms its deadline, its progress, its gate and its watch. */
function openAttempt(engine: Engine, req: AttemptRequest, group: Group, log: Logger): OpenAttempt {
  const db = engine.locks.db;
  const { rowId } = req;
  const { groupId, executionId, attempt } = req.cell;
  // The claim committed in the carrier's step, before this registers: a Stop's notice
  // that arrived in between is remembered by the registry, which aborts it here at once.
  const controller = new AbortController();
  const unregister = registerAttempt(executionId, controller);

  // The deadline's time as well as its timer: the rate-limit pacing reserves no slot past it.
  const deadlineAt = Date.now() + req.attemptTimeoutMs;
  const timer = setTimeout(
    () =>
      controller.abort(
        new DeadlineError(`Timed out after ${formatDuration(req.attemptTimeoutMs)}`),
      ),
    req.attemptTimeoutMs,
  );
  const onCascadeAbort = () => controller.abort(req.cascadeSignal.reason);
  if (req.cascadeSignal.aborted) onCascadeAbort();
  else req.cascadeSignal.addEventListener("abort", onCascadeAbort, { once: true });

  const progress = new ProgressWriter(
    db,
    { rowId, groupId, executionId, attempt },
    (reason) => controller.abort(new LostAuthority(reason)),
    (err) => log.warn({ err }, "a progress write failed; the next change retries it"),
  );

  const paidAttempt = {
    workspaceId: req.step.workspaceId,
    plan: req.step.plan,
    tableId: req.tableId,
    rowId,
    groupId,
    executionId,
    attempt,
    dispatchId: req.cell.dispatchId,
  };
  const paid = paidCalls(engine, paidAttempt, (halt) => controller.abort(halt), {
    deadlineAt,
    onCacheError: (err) => log.warn({ err }, "the enrichment cache could not be written"),
  });
  const llm = llmCalls(engine, paidAttempt, (halt) => controller.abort(halt), {
    deadlineAt,
    onCacheError: (err) => log.warn({ err }, "the llm result cache could not be written"),
  });
  // Where a Stop's notice cannot reach this process (trigger.dev), the tombstone is read
  // on a timer: a block that writes nothing still ends within `stopCheckMs` of the Stop.
  const unwatch = engine.stopCheckMs
    ? watchTombstone(
        db,
        { rowId, groupId, executionId, attempt },
        engine.stopCheckMs,
        (reason) => controller.abort(new LostAuthority(reason)),
        (err) => log.warn({ err }, "could not read the cell's tombstone; reading again"),
      )
    : undefined;
  return {
    db,
    log,
    group,
    controller,
    progress,
    paid,
    llm,
    secrets: {},
    lineage: undefined,
    release: { unregister, timer, onCascadeAbort, ...(unwatch ? { unwatch } : {}) },
  };
}

/**
 * Paid work: admitted (charged once per execution and enrichment) right before the first
 * provider call, so a skipped cell (missing input) costs nothing; credits used up halt
 * the run and hand this cell back un-run. Every call is then rate-paced.
 */
async function enrichmentAttempt(
  req: AttemptRequest,
  run: OpenAttempt,
  group: EnrichmentGroup,
): Promise<AttemptResult> {
  const cost = getEnrichment(group.enrichmentId)?.cost ?? 0;
  const gate = run.paid({
    source: group.enrichmentId,
    chargeId: req.cell.executionId,
    credits: cost,
  });
  const terminal = await enrichmentTerminal({
    db: run.db,
    log: run.log,
    workspaceId: req.step.workspaceId,
    group,
    data: req.step.data,
    signal: run.controller.signal,
    gate,
  });
  if (run.controller.signal.aborted) throw run.controller.signal.reason;
  return write(terminal);
}

/** The workflow's definition, or the failure that says why there is none to run. */

function endedBy(run: OpenAttempt, err: unknown): AttemptResult {
  const { controller, secrets } = run;
  const reason: unknown = controller.signal.aborted ? controller.signal.reason : err;
  // By brand (src/errors): the web server's bundle has its own copy of these classes,
  // and a Stop issued there aborts attempts registered here.
  if (isCancelled(reason)) return ended("cancelled");
  // The usage-limit halt took the cell back (un-run): nothing left to write.
  if (isUsageLimitHalt(reason)) return ended("gone");
  // A call over the row's budget was not made: the whole cell ends so, whichever block or
  // step asked, outputs blank; nothing is settled, so what the attempt holds is released.
  if (isRowBudgetExceeded(reason))
    return write({
      kind: "complete",
      outcome: "over_budget",
      finish: {
        blockErrors: {},
        outputs: blankOutputs(run.group),
        details: { overBudget: { source: reason.source, costCredits: reason.credits } },
      },
    });
  if (isInterrupted(reason)) return { kind: "interrupted", end: "interrupted" };
  if (isLostAuthority(reason)) return ended(reason.reason);
  if (isDeadline(reason)) return failure(reason.message);
  // A deployment without a shared limiter: the message says what to set.
  if (isSharedLimiterRequired(reason)) return failure(reason.message);
  // Error texts quote what blocks saw (URLs, answers): no secret leaves in them.
  if (reason instanceof WorkflowError)
    return failure(
      redactText(reason.message, secrets),
      redact(reason.blockErrors, secrets),
      reason.details ? cellDetails(reason.details) : undefined,
    );
  const text = redactText(reason instanceof Error ? reason.message : String(reason), secrets);
  run.log.error({ err: { message: text } }, "attempt failed unexpectedly");
  return failure(`Internal error: ${text}`);
}

async function closeAttempt(req: AttemptRequest, run: OpenAttempt): Promise<void> {
  const { executionId, attempt } = req.cell;
  run.release.unwatch?.();
  // Before the terminal write, which the carrier makes after this returns.
  await run.progress.close();
  // A Stop, a halt or a lost cell ended the attempt with children running.
  if (run.lineage && run.lineage.open() > 0)
    await sweepLeftChildren(run.db, { executionId, attempt }, "this", run.log);
  clearTimeout(run.release.timer);
  req.cascadeSignal.removeEventListener("abort", run.release.onCascadeAbort);
  run.release.unregister();
}

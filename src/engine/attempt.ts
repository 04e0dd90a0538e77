/**
 * One attempt: one group on one row, by the carrier holding the row lock, of a cell the
 * carrier's step already claimed (`row-step.ts`: the only way into `running`). Invariant:
 * every write is fenced by the execution id and the claim's attempt number (progress,
 * checkpoints, pause, terminal); the first write that is rejected ends the attempt at
 * once, and an attempt that ends because of a Stop writes nothing (the tombstone is
 * already there). A Stop reaches it through its abort signal (the process's cancel
 * registry), its next fenced write, or, where the notice does not reach (trigger.dev), a
 * read of its tombstone every `stopCheckMs`. The terminal write is returned, not made:
 * the carrier sends it with its next step, fenced the same way.
 */
import type { Db } from "@db/client";
import type { Logger } from "@/config/log";
import type { EnrichmentGroup, Group, TableSchema, WorkflowGroup } from "@/contracts/table";
import { type Block, WorkflowDefinition } from "@/contracts/workflow";
import { formatDuration } from "@/domain/durations";
import type { LostReason } from "@/domain/statuses";
import { groupInputs } from "@/domain/table-schema";
import { getEnrichment } from "@/enrichments/registry";
import type { PaidCalls } from "@/enrichments/types";
import {
  DeadlineError,
  isCancelled,
  isDeadline,
  isInterrupted,
  isLostAuthority,
  isSharedLimiterRequired,
  isUsageLimitHalt,
  LostAuthority,
} from "@/errors";
import { pickOutput, type RunOutput, runWorkflow, WorkflowError } from "@/execution/executor";
import { redact, redactText } from "@/security/redact";
import type { Terminal } from "@/store/cells/finish";
import { pauseAttempt } from "@/store/cells/pause-attempt";
import type { ClaimedCell } from "@/store/cells/row-step";
import { type CascadeStep, childWorkflow } from "@/store/engine-reads";
import { readExecutionRecords } from "@/store/execution-steps/read";
import { writeCheckpoint } from "@/store/executions/checkpoint";
import { loadSecrets } from "@/store/secrets/read";
import { registerAttempt, watchTombstone } from "./cancellation";
import { childLineage, sweepLeftChildren } from "./child-lineage";
import { enrichmentTerminal } from "./enrichment-attempt";
import type { Engine } from "./handle";
import { paidCalls } from "./paid-calls";
import { ProgressWriter } from "./progress";

export type AttemptEnd =
  | "completed"
  | "skipped"
  | "error"
  | "cancelled"
  | "interrupted"
  | "paused"
  | LostReason;

/**
 * One attempt's own request; everything shared (where it writes, the rate lines, the
 * definitions, the settings) is the engine handle's.
 */
export interface AttemptRequest {
  tableId: string;
  rowId: string;
  /** The cell the carrier's step claimed: its attempt number fences every write. */
  cell: ClaimedCell;
  /** The step's read of the row: its data, the workflows' stamps, the workspace's plan. */
  step: Pick<CascadeStep, "workflows" | "workspaceId" | "plan"> & {
    data: Record<string, unknown>;
  };
  schema: TableSchema;
  /** The cascade's stop: a shutdown, the row's deadline or the lost lock session. */
  cascadeSignal: AbortSignal;
  attemptTimeoutMs: number;
  /** The carrier's logger for the row. */
  log: Logger;
}

/**
 * How an attempt ended: with a terminal write for the carrier to make, interrupted by a
 * shutdown (the carrier hands the cell back to the queue), or with nothing to write.
 */
export type AttemptResult =
  | { kind: "write"; terminal: Terminal; end: "completed" | "skipped" | "error" }
  | { kind: "paused"; end: "paused"; resumeAt: number | undefined }
  | { kind: "interrupted"; end: "interrupted" }
  | { kind: "ended"; end: AttemptEnd };

const ended = (end: AttemptEnd): AttemptResult => ({ kind: "ended", end });
const write = (terminal: Terminal): AttemptResult => ({
  kind: "write",
  terminal,
  end:
    terminal.kind === "fail" ? "error" : terminal.outcome === "skipped" ? "skipped" : "completed",
});
const failure = (message: string, blockErrors: Record<string, string> = {}): AttemptResult =>
  write({ kind: "fail", message, finish: { blockErrors } });

function groupOutputs(
  group: Group,
  blocks: Record<string, unknown>,
  onlyBlock?: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const o of group.outputs) {
    if (onlyBlock !== undefined && o.from.split(".")[0] !== onlyBlock) continue;
    out[o.columnId] = pickOutput(blocks, o.from);
  }
  return out;
}

/** Whether a workflow can reach workspace secrets: by name, or through blocks that load more. */
function needsSecrets(definition: WorkflowDefinition): boolean {
  return definition.blocks.some(
    (b) =>
      b.type === "llm" ||
      b.type === "foreach" ||
      b.type === "workflow" ||
      b.type === "enrichment" ||
      JSON.stringify(b).includes("secrets"),
  );
}

/** The edges a paused block takes when it resumes (approval and wait have plain `next`). */
function nextOf(block: Block | undefined): string[] {
  const next = block?.next;
  if (next === undefined) return [];
  if (typeof next === "string") return [next];
  if (Array.isArray(next)) return next;
  return [];
}

const blank = (group: Group) => Object.fromEntries(group.outputs.map((o) => [o.columnId, null]));
const missing = (v: unknown) => v === undefined || v === null || v === "";

/**
 * What an attempt holds while it runs, set up by `openAttempt` and let go by
 * `closeAttempt`: its abort controller (registered for a Stop's notice), its deadline,
 * its progress writer and its paid-call gate. `secrets` and `lineage` are filled in as
 * the workflow starts: the error texts are redacted with the secrets, and children left
 * running are swept when it ends.
 */
interface OpenAttempt {
  readonly db: Db;
  readonly log: Logger;
  readonly group: Group;
  readonly controller: AbortController;
  readonly progress: ProgressWriter;
  readonly paid: PaidCalls;
  secrets: Record<string, string>;
  lineage: ReturnType<typeof childLineage> | undefined;
  /** Lets go of the registration, the deadline, the listeners and the tombstone watch. */
  readonly release: {
    unregister(): void;
    timer: NodeJS.Timeout;
    onCascadeAbort(): void;
    unwatch?(): void;
  };
}

export async function runAttempt(engine: Engine, req: AttemptRequest): Promise<AttemptResult> {
  const { groupId, executionId } = req.cell;
  const log = req.log.child({ groupId, executionId });
  const group = req.schema.groups.find((g) => g.id === groupId);
  if (!group) return failure("The group was removed from the table before it ran");
  const run = openAttempt(engine, req, group, log);
  try {
    if (run.controller.signal.aborted) throw run.controller.signal.reason;
    if (group.kind === "enrichment") return await enrichmentAttempt(req, run, group);
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

  const paid = paidCalls(
    engine,
    {
      workspaceId: req.step.workspaceId,
      plan: req.step.plan,
      tableId: req.tableId,
      rowId,
      groupId,
      executionId,
      attempt,
      dispatchId: req.cell.dispatchId,
    },
    (halt) => controller.abort(halt),
    {
      deadlineAt,
      onCacheError: (err) => log.warn({ err }, "the enrichment cache could not be written"),
    },
  );
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
async function definitionFor(
  engine: Engine,
  req: AttemptRequest,
  group: WorkflowGroup,
): Promise<{ ok: true; definition: WorkflowDefinition } | { ok: false; end: AttemptResult }> {
  const found = await engine.definitions.definition(
    engine.locks.db,
    group.workflowId,
    group.version,
    req.step.workflows[group.workflowId],
  );
  if (found.ok) return found;
  return {
    ok: false,
    end: failure(
      found.reason === "not_deployed"
        ? "The workflow has no deployed version; deploy it or set the group to run the live draft"
        : found.reason === "invalid"
          ? "The workflow definition is not valid any more"
          : "The workflow no longer exists",
    ),
  };
}

async function workflowAttempt(
  engine: Engine,
  req: AttemptRequest,
  run: OpenAttempt,
  group: WorkflowGroup,
): Promise<AttemptResult> {
  const { db, controller, log } = run;
  const found = await definitionFor(engine, req, group);
  if (!found.ok) return found.end;
  const { definition } = found;
  const { executionId, attempt } = req.cell;
  const inputs = groupInputs(group, req.step.data);
  const absent = definition.inputs
    .filter((i) => i.required && missing(inputs[i.name]))
    .map((i) => i.name);
  if (absent.length > 0) {
    return write({
      kind: "complete",
      outcome: "skipped",
      finish: { blockErrors: {}, outputs: blank(group) },
    });
  }
  // Own properties only (never `row[name] = …`): a name such as `__proto__` must stay a key.
  const row: Record<string, unknown> = Object.fromEntries(
    req.schema.columns.map((c) => [c.name, req.step.data[c.id] ?? null]),
  );
  const ref = { executionId, attempt, tableId: req.tableId, rowId: req.rowId, groupId: group.id };
  // Secrets only where the workflow can use them: a query saved on every other cell.
  run.secrets = needsSecrets(definition) ? await loadSecrets(db, req.step.workspaceId, log) : {};
  // What this execution (and those it resumes) recorded; a fresh one has nothing.
  const records = req.cell.resumable
    ? await readExecutionRecords(db, executionId)
    : { checkpoints: {}, chain: [executionId], scopes: [] };
  // An earlier attempt of this execution died with children running: they ended then.
  if (attempt > 1) await sweepLeftChildren(db, { executionId, attempt }, "before", log);
  const lineage = childLineage(db, ref, {
    secrets: () => run.secrets,
    onLost: () => controller.abort(new LostAuthority("stale")),
    log,
    records,
  });
  run.lineage = lineage;
  const result = await runWorkflow({
    definition,
    inputs,
    row,
    executionId,
    signal: controller.signal,
    secrets: run.secrets,
    checkpoints: records.checkpoints,
    paid: run.paid,
    lineage,
    children: {
      path: [group.workflowId],
      load: async (id) => {
        const raw = await childWorkflow(db, req.step.workspaceId, id, group.version);
        const parsed = raw === null ? null : WorkflowDefinition.safeParse(raw);
        return parsed?.success ? parsed.data : null;
      },
    },
    hooks: {
      onBlockStart: (id) => run.progress.blockStarted(id),
      onBlockComplete: (id, output) =>
        run.progress.blockFinished(
          id,
          redact(groupOutputs(group, { [id]: output }, id), run.secrets),
        ),
      checkpoint: async (id, checkpoint, charges) => {
        if (!(await writeCheckpoint(db, ref, id, checkpoint, charges)))
          controller.abort(new LostAuthority("stale"));
      },
    },
  });
  await run.progress.close();
  if (controller.signal.aborted) throw controller.signal.reason;
  return workflowEnd(run, ref, definition, result);
}

/** A paused workflow's pause, fenced; a finished one's terminal write. */
async function workflowEnd(
  run: OpenAttempt,
  ref: { executionId: string; attempt: number; tableId: string; rowId: string; groupId: string },
  definition: WorkflowDefinition,
  result: RunOutput,
): Promise<AttemptResult> {
  if (result.paused) {
    const { blockId, pause } = result.paused;
    const block = definition.blocks.find((b) => b.id === blockId);
    const paused = await pauseAttempt(run.db, {
      ...ref,
      pause: {
        blockId,
        reason: pause.reason,
        taken: nextOf(block),
        ...(pause.resumeAt !== undefined ? { resumeAt: pause.resumeAt } : {}),
        ...(pause.output !== undefined ? { output: pause.output } : {}),
      },
    });
    return paused ? { kind: "paused", end: "paused", resumeAt: pause.resumeAt } : ended("stale");
  }
  return write({
    kind: "complete",
    outcome: "ok",
    finish: {
      blockErrors: {},
      outputs: redact(groupOutputs(run.group, result.blocks), run.secrets),
      charges: result.charges,
    },
  });
}

/** How an attempt that threw (or was aborted) ended. */
function endedBy(run: OpenAttempt, err: unknown): AttemptResult {
  const { controller, secrets } = run;
  const reason: unknown = controller.signal.aborted ? controller.signal.reason : err;
  // By brand (src/errors): the web server's bundle has its own copy of these classes,
  // and a Stop issued there aborts attempts registered here.
  if (isCancelled(reason)) return ended("cancelled");
  // The usage-limit halt took the cell back (un-run): nothing left to write.
  if (isUsageLimitHalt(reason)) return ended("gone");
  if (isInterrupted(reason)) return { kind: "interrupted", end: "interrupted" };
  if (isLostAuthority(reason)) return ended(reason.reason);
  if (isDeadline(reason)) return failure(reason.message);
  // A deployment without a shared limiter: the message says what to set.
  if (isSharedLimiterRequired(reason)) return failure(reason.message);
  // Error texts quote what blocks saw (URLs, answers): no secret leaves in them.
  if (reason instanceof WorkflowError)
    return failure(redactText(reason.message, secrets), redact(reason.blockErrors, secrets));
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

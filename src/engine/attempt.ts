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
import type { Group, TableSchema } from "@/contracts/table";
import { type Block, WorkflowDefinition } from "@/contracts/workflow";
import { formatDuration } from "@/domain/durations";
import type { LostReason, Plan } from "@/domain/statuses";
import { groupInputs } from "@/domain/table-schema";
import { getEnrichment } from "@/enrichments/registry";
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
import { pickOutput, runWorkflow, WorkflowError } from "@/execution/executor";
import type { RateLimiter } from "@/limits/rate/port";
import { redact, redactText } from "@/security/redact";
import type { Terminal } from "@/store/cells/finish";
import { pauseAttempt } from "@/store/cells/pause-attempt";
import { type CascadeStep, childWorkflow } from "@/store/engine-reads";
import { readExecutionRecords } from "@/store/execution-steps/read";
import { writeCheckpoint } from "@/store/executions/checkpoint";
import { loadSecrets } from "@/store/secrets/read";
import { registerAttempt, watchTombstone } from "./cancellation";
import { childLineage, sweepLeftChildren } from "./child-lineage";
import { definitionOf } from "./definitions";
import { enrichmentTerminal } from "./enrichment-attempt";
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

export interface AttemptInput {
  db: Db;
  log: Logger;
  tableId: string;
  rowId: string;
  schema: TableSchema;
  data: Record<string, unknown>;
  groupId: string;
  executionId: string;
  cascadeSignal: AbortSignal;
  attemptTimeoutMs: number;
  workflows: CascadeStep["workflows"];
  workspaceId: string;
  plan: Plan;
  /** The run that stamped the cell, if any: a usage-limit halt stops it. */
  dispatchId: string | null;
  /** The number the carrier's step claimed the cell with: the fence of every write. */
  attempt: number;
  /**
   * An earlier attempt of this execution left records (checkpoints, steps, a pause), or it
   * resumes another: load them.
   */
  resumable: boolean;
  /** Paces the attempt's paid provider calls. */
  limiter: RateLimiter;
  /** Refuse paid calls unless the rate limiter is shared across processes (trigger.dev). */
  requireSharedLimiter?: boolean;
  /** Reuse paid enrichments' answers this young (0: the cache is off). */
  enrichmentCacheTtlMs: number;
  /**
   * Read the cell's tombstone this often while the attempt runs (trigger.dev, where a
   * Stop's notice does not reach the process); absent: the notice aborts the attempt.
   */
  stopCheckMs?: number;
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

export async function runAttempt(a: AttemptInput): Promise<AttemptResult> {
  const { db, rowId, groupId, executionId, attempt } = a;
  const log = a.log.child({ groupId, executionId });
  const group = a.schema.groups.find((g) => g.id === groupId);
  if (!group) return failure("The group was removed from the table before it ran");
  // The claim committed in the carrier's step, before this registers: a Stop's notice
  // that arrived in between is remembered by the registry, which aborts it here at once.
  const controller = new AbortController();
  const unregister = registerAttempt(executionId, controller);

  // The deadline's time as well as its timer: the rate-limit pacing reserves no slot past it.
  const deadlineAt = Date.now() + a.attemptTimeoutMs;
  const timer = setTimeout(
    () =>
      controller.abort(new DeadlineError(`Timed out after ${formatDuration(a.attemptTimeoutMs)}`)),
    a.attemptTimeoutMs,
  );
  const onCascadeAbort = () => controller.abort(a.cascadeSignal.reason);
  if (a.cascadeSignal.aborted) onCascadeAbort();
  else a.cascadeSignal.addEventListener("abort", onCascadeAbort, { once: true });

  const progress = new ProgressWriter(
    db,
    { rowId, groupId, executionId, attempt },
    (reason) => controller.abort(new LostAuthority(reason)),
    (err) => log.warn({ err }, "a progress write failed; the next change retries it"),
  );

  let secrets: Record<string, string> = {};
  let lineage: ReturnType<typeof childLineage> | undefined;
  const paid = paidCalls(
    db,
    a.limiter,
    {
      workspaceId: a.workspaceId,
      plan: a.plan,
      tableId: a.tableId,
      rowId,
      groupId,
      executionId,
      attempt,
      dispatchId: a.dispatchId,
    },
    (halt) => controller.abort(halt),
    {
      requireSharedLimiter: a.requireSharedLimiter ?? false,
      deadlineAt,
      cacheTtlMs: a.enrichmentCacheTtlMs,
      onCacheError: (err) => log.warn({ err }, "the enrichment cache could not be written"),
    },
  );
  // Where a Stop's notice cannot reach this process (trigger.dev), the tombstone is read
  // on a timer: a block that writes nothing still ends within `stopCheckMs` of the Stop.
  const unwatch = a.stopCheckMs
    ? watchTombstone(
        db,
        { rowId, groupId, executionId, attempt },
        a.stopCheckMs,
        (reason) => controller.abort(new LostAuthority(reason)),
        (err) => log.warn({ err }, "could not read the cell's tombstone; reading again"),
      )
    : undefined;
  try {
    if (controller.signal.aborted) throw controller.signal.reason;
    if (group.kind === "enrichment") {
      // Paid work: admitted (charged once per execution and enrichment) right before the
      // first provider call, so a skipped cell (missing input) costs nothing; credits used
      // up halt the run and hand this cell back un-run. Every call is then rate-paced.
      const cost = getEnrichment(group.enrichmentId)?.cost ?? 0;
      const gate = paid({ source: group.enrichmentId, chargeId: executionId, credits: cost });
      const terminal = await enrichmentTerminal({
        ...a,
        log,
        group,
        signal: controller.signal,
        gate,
      });
      if (controller.signal.aborted) throw controller.signal.reason;
      return write(terminal);
    }
    const found = await definitionOf(
      db,
      group.workflowId,
      group.version,
      a.workflows[group.workflowId],
    );
    if (!found.ok) {
      return failure(
        found.reason === "not_deployed"
          ? "The workflow has no deployed version; deploy it or set the group to run the live draft"
          : found.reason === "invalid"
            ? "The workflow definition is not valid any more"
            : "The workflow no longer exists",
      );
    }
    const definition = found.definition;

    const inputs = groupInputs(group, a.data);
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
      a.schema.columns.map((c) => [c.name, a.data[c.id] ?? null]),
    );

    const ref = { executionId, attempt, tableId: a.tableId, rowId, groupId };
    // Secrets only where the workflow can use them: a query saved on every other cell.
    secrets = needsSecrets(definition) ? await loadSecrets(db, a.workspaceId, log) : {};
    // What this execution (and those it resumes) recorded; a fresh one has nothing.
    const records = a.resumable
      ? await readExecutionRecords(db, executionId)
      : { checkpoints: {}, chain: [executionId], scopes: [] };
    // An earlier attempt of this execution died with children running: they ended then.
    if (attempt > 1) await sweepLeftChildren(db, { executionId, attempt }, "before", log);
    lineage = childLineage(db, ref, {
      secrets: () => secrets,
      onLost: () => controller.abort(new LostAuthority("stale")),
      log,
      records,
    });
    const result = await runWorkflow({
      definition,
      inputs,
      row,
      executionId,
      signal: controller.signal,
      secrets,
      checkpoints: records.checkpoints,
      paid,
      lineage,
      children: {
        path: [group.workflowId],
        load: async (id) => {
          const raw = await childWorkflow(db, a.workspaceId, id, group.version);
          const parsed = raw === null ? null : WorkflowDefinition.safeParse(raw);
          return parsed?.success ? parsed.data : null;
        },
      },
      hooks: {
        onBlockStart: (id) => progress.blockStarted(id),
        onBlockComplete: (id, output) =>
          progress.blockFinished(id, redact(groupOutputs(group, { [id]: output }, id), secrets)),
        checkpoint: async (id, checkpoint, charges) => {
          if (!(await writeCheckpoint(db, ref, id, checkpoint, charges)))
            controller.abort(new LostAuthority("stale"));
        },
      },
    });
    await progress.close();
    if (controller.signal.aborted) throw controller.signal.reason;
    if (result.paused) {
      const { blockId, pause } = result.paused;
      const block = definition.blocks.find((b) => b.id === blockId);
      const paused = await pauseAttempt(db, {
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
        outputs: redact(groupOutputs(group, result.blocks), secrets),
        charges: result.charges,
      },
    });
  } catch (err) {
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
    log.error({ err: { message: text } }, "attempt failed unexpectedly");
    return failure(`Internal error: ${text}`);
  } finally {
    unwatch?.();
    // Before the terminal write, which the carrier makes after this returns.
    await progress.close();
    // A Stop, a halt or a lost cell ended the attempt with children running.
    if (lineage && lineage.open() > 0)
      await sweepLeftChildren(db, { executionId, attempt }, "this", log);
    clearTimeout(timer);
    a.cascadeSignal.removeEventListener("abort", onCascadeAbort);
    unregister();
  }
}

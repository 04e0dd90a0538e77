/**
 * Runs a workflow DAG. Invariants: a block starts only after every predecessor has
 * finished or been skipped, and runs if at least one of them took the edge to it (a join
 * waits for every taken branch); parallel `next` lists run concurrently; the first block
 * failure aborts the rest and fails the run with that block's id; an abort stops every
 * running block.
 *
 * A finished block with effects (all but the pure ones) is recorded before any block
 * after it starts (finished-blocks.ts), and a later attempt reuses it instead of running it
 * again: the cell's own blocks as checkpoints (`hooks.checkpoint`), a child run's blocks,
 * at any depth, as step records of the execution (`lineage.record`) under the digest of
 * the child's inputs — reused only by a child run with the same inputs. A child's id, and so the
 * Idempotency-Keys and charges of what runs in it, come from its execution's id: what a
 * resumed execution runs again is sent under its own keys. Each block run (its retries
 * included) is a span, the child of the attempt's (or of its parent block's, in a child run).
 */
import type { Block, Checkpoint, WorkflowDefinition } from "@/contracts/workflow";
import type { ChargeKey } from "@/domain/charges";
import { digestOf } from "@/domain/digest";
import { assertNever } from "@/domain/statuses";
import { entryBlock } from "@/domain/workflow-graph";
import type { PaidCalls } from "@/enrichments/types";
import { tracingOn, withSpan } from "@/tracing/spans";
import { runApproval, runCondition, runFail, runTransform, runWait } from "./blocks/basic";
import { type ChildResult, foreachRunner, type RunChild, workflowRunner } from "./blocks/compose";
import { runEnrichmentBlock } from "./blocks/enrichment";
import { runHttp } from "./blocks/http";
import { runLlm } from "./blocks/llm";
import {
  type BlockContext,
  BlockError,
  type BlockPause,
  type BlockResult,
  type ChildLedger,
  type Children,
  type StepRecord,
  withRetries,
} from "./blocks/types";
import type { ExpressionScope } from "./expressions";
import { type CheckpointHook, mergeDetails, recordFinished } from "./finished-blocks";
import { type LlmCalls, llmOf } from "./llm-calls";

export interface RunHooks {
  onBlockStart?(blockId: string): void;
  onBlockComplete?(blockId: string, output: unknown): void;
  /** Persists a finished block; the blocks after it wait for this. */
  checkpoint?: CheckpointHook;
}

export interface RunInput {
  definition: WorkflowDefinition;
  inputs: Record<string, unknown>;
  row: Record<string, unknown>;
  executionId: string;
  signal: AbortSignal;
  hooks?: RunHooks;
  /** The workspace's secrets, for `secrets.NAME` in expressions and templates. */
  secrets?: Record<string, string>;
  /** Blocks finished by an earlier attempt of this execution (crash, pause). */
  checkpoints?: Record<string, Checkpoint>;
  /** Where `foreach` and `workflow` blocks load their children from. */
  children?: Children;
  /** The gate for paid provider calls (enrichment blocks): admission and pacing. */
  paid?: PaidCalls;
  /** The gate for model calls (llm blocks): reservation, pacing and pricing. */
  llm?: LlmCalls;
  /**
   * Where child runs (sub-workflows, foreach items) and the steps finished inside them are
   * recorded, and the steps an earlier attempt finished are found.
   */
  lineage?: ChildLedger;
  /**
   * The run's place in its execution: "" (the default) for the cell's workflow, whose
   * blocks are checkpoints; a child's id after the cell's execution id for a child run,
   * whose blocks are step records.
   */
  stepScope?: string;
}

export interface RunOutput {
  /** Output of every block that ran, by id; skipped blocks are absent. */
  blocks: Record<string, unknown>;
  /** Set when a block paused the run: resume it with that block's output. */
  paused?: { blockId: string; pause: BlockPause };
  /** A block of the run holds failed foreach items: a resumed execution runs it again. */
  retryOnResume?: boolean;
  /**
   * Paid answers in the outputs that no write of this run recorded (a run with neither a
   * checkpoint hook nor a ledger): the caller's write that records the outputs charges them.
   */
  charges: ChargeKey[];
  /**
   * What the run's own blocks report for the cell's `details` (`llm.<blockId>`); absent
   * when none reports anything. Child runs' blocks are not gathered here.
   */
  details?: Record<string, Record<string, unknown>>;
}

export class WorkflowError extends Error {
  /** What the blocks that finished before the failure reported (`RunOutput.details`). */
  details?: Record<string, Record<string, unknown>>;
  constructor(
    readonly blockId: string,
    message: string,
    readonly blockErrors: Record<string, string>,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "WorkflowError";
  }
}

const runWorkflowBlock = workflowRunner(runChild);
const runForeach = foreachRunner(runChild);

/**
 * A child workflow: a run of its own under the parent's signal, recorded from start to end
 * when the attempt keeps a lineage (a foreach item's `ok` end is written by the fan-out,
 * with the item's record); its result is its leaves' output.
 */
async function runChild(args: Parameters<RunChild>[0]): Promise<ChildResult> {
  const lineage = args.ctx.lineage;
  await lineage?.started({ id: args.executionId, parentId: args.ctx.executionId, ...args.call });
  try {
    const out = await runWorkflow({
      definition: args.definition,
      inputs: args.inputs,
      row: args.ctx.scope.row,
      executionId: args.executionId,
      stepScope: args.stepScope,
      signal: args.ctx.signal,
      secrets: args.ctx.scope.secrets,
      ...(args.ctx.children ? { children: { ...args.ctx.children, path: args.path } } : {}),
      ...(args.ctx.paid ? { paid: args.ctx.paid } : {}),
      ...(args.ctx.llm ? { llm: args.ctx.llm } : {}),
      ...(lineage ? { lineage } : {}),
    });
    if (out.paused)
      throw new BlockError(
        out.paused.blockId,
        "a sub-workflow cannot pause (approval, long wait)",
        {
          retryable: false,
        },
      );
    const output = leafOutput(args.definition, out.blocks);
    if (args.call.index === null)
      await lineage?.ended(args.executionId, { status: "completed", output });
    return { output, retryOnResume: out.retryOnResume ?? false, charges: out.charges };
  } catch (err) {
    await lineage?.ended(
      args.executionId,
      args.ctx.signal.aborted
        ? { status: "cancelled" }
        : { status: "error", error: err instanceof Error ? err.message : String(err) },
    );
    throw err;
  }
}

/**
 * What a workflow returns to its parent: the output of the block that ended it (a block
 * with no `next` that ran), or, when several branches ended, their outputs by block id.
 */
export function leafOutput(
  definition: WorkflowDefinition,
  blocks: Record<string, unknown>,
): unknown {
  const leaves = definition.blocks.filter((b) => b.next === undefined && b.id in blocks);
  if (leaves.length === 1 && leaves[0]) return blocks[leaves[0].id];
  return Object.fromEntries(leaves.map((b) => [b.id, blocks[b.id]]));
}

function runBlock(block: Block, ctx: BlockContext): Promise<BlockResult> {
  switch (block.type) {
    case "transform":
      return runTransform(block, ctx);
    case "condition":
      return runCondition(block, ctx);
    case "wait":
      return runWait(block, ctx);
    case "fail":
      return runFail(block, ctx);
    case "approval":
      return runApproval(block, ctx);
    case "workflow":
      return runWorkflowBlock(block, ctx);
    case "foreach":
      return runForeach(block, ctx);
    case "http":
      return runHttp(block, ctx);
    case "llm":
      return runLlm(block, ctx);
    case "enrichment":
      return runEnrichmentBlock(block, ctx);
    default:
      return assertNever(block);
  }
}

/** Which successors a finished block activates. */
function takenEdges(block: Block, result: BlockResult): string[] {
  const next = block.next;
  if (next === undefined) return [];
  if (typeof next === "string") return [next];
  if (Array.isArray(next)) return next;
  const port = result.port ?? "true";
  const target = next[port];
  return target ? [target] : [];
}

/** How a block settled: whether it ran (or was reused), and the edges it took. */
interface Settled {
  ran: boolean;
  taken: string[];
}

/** One run of a workflow: what its blocks share while they settle. */
interface WorkflowRun {
  input: RunInput;
  entryId: string;
  preds: Map<string, string[]>;
  byId: Map<string, Block>;
  blocks: Record<string, unknown>;
  scope: ExpressionScope;
  /** Aborted by the first block failure (so the others stop) or by the run's own signal. */
  failure: AbortController;
  signal: AbortSignal;
  /** Stops forwarding the run's signal (its listener would outlive the run otherwise). */
  release: () => void;
  stepScope: string;
  nested: boolean;
  digest: string;
  recorded: Map<string, StepRecord>;
  results: Map<string, Promise<Settled>>;
  firstError?: WorkflowError;
  paused?: RunOutput["paused"];
  retryOnResume: boolean;
  unrecorded: ChargeKey[];
  details?: Record<string, Record<string, unknown>>;
}

export async function runWorkflow(input: RunInput): Promise<RunOutput> {
  const run = await startWorkflowRun(input);
  try {
    await Promise.all(input.definition.blocks.map((b) => settle(run, b.id)));
  } finally {
    run.release();
  }
  if (input.signal.aborted) throw input.signal.reason;
  if (run.firstError) {
    if (run.details) run.firstError.details = run.details;
    throw run.firstError;
  }
  return {
    blocks: run.blocks,
    charges: run.unrecorded,
    ...(run.details ? { details: run.details } : {}),
    ...(run.paused ? { paused: run.paused } : {}),
    ...(run.retryOnResume ? { retryOnResume: run.retryOnResume } : {}),
  };
}

async function startWorkflowRun(input: RunInput): Promise<WorkflowRun> {
  const { definition } = input;
  const entry = entryBlock(definition);
  if (!entry) throw new WorkflowError("", "the workflow has no entry block", {});
  const blocks: Record<string, unknown> = {};
  const stepScope = input.stepScope ?? "";
  const nested = stepScope !== "";
  const recorded = (await input.lineage?.recorded(stepScope)) ?? new Map<string, StepRecord>();
  // One controller for both: the first block failure aborts it, and so does the run's
  // signal (forwarded). `AbortSignal.any` did the same at several times the cost per run
  // (W1 runs one per cell), and kept each combined signal until a GC.
  const failure = new AbortController();
  const forward = () => failure.abort(input.signal.reason);
  const run: WorkflowRun = {
    input,
    entryId: entry.id,
    preds: predecessorsOf(definition),
    byId: new Map(definition.blocks.map((b) => [b.id, b])),
    blocks,
    scope: { inputs: input.inputs, row: input.row, blocks, vars: {}, secrets: input.secrets ?? {} },
    failure,
    signal: failure.signal,
    release: () => input.signal.removeEventListener("abort", forward),
    stepScope,
    nested,
    // A child's records are reused only by a run of it with the same inputs.
    digest: nested ? digestOf(input.inputs) : "",
    recorded,
    results: new Map(),
    retryOnResume: false,
    unrecorded: [],
  };
  // Last, once nothing above can throw: `runWorkflow`'s finally removes it.
  if (input.signal.aborted) forward();
  else input.signal.addEventListener("abort", forward, { once: true });
  return run;
}

/** Each block's predecessors: the blocks with an edge to it. */
function predecessorsOf(definition: WorkflowDefinition): Map<string, string[]> {
  const preds = new Map<string, string[]>();
  for (const b of definition.blocks) {
    const targets = b.type === "condition" ? [b.next?.true, b.next?.false] : [b.next].flat();
    for (const t of targets) if (t) preds.set(t, [...(preds.get(t) ?? []), b.id]);
  }
  return preds;
}

/** What an earlier attempt finished of this block, if this run may reuse it. */
function reusable(run: WorkflowRun, id: string): Checkpoint | undefined {
  if (!run.nested) return run.input.checkpoints?.[id];
  const r = run.recorded.get(id);
  if (!r || r.digest !== run.digest) return undefined;
  return { output: r.output, taken: r.taken, ...(r.retryOnResume ? { retryOnResume: true } : {}) };
}

/** A block's settlement, started once and shared by every successor that waits for it. */
function settle(run: WorkflowRun, id: string): Promise<Settled> {
  const known = run.results.get(id);
  if (known !== undefined) return known;
  const p = settleBlock(run, id);
  run.results.set(id, p);
  return p;
}

async function settleBlock(run: WorkflowRun, id: string): Promise<Settled> {
  const block = run.byId.get(id);
  if (!block) return { ran: false, taken: [] };
  const before = await Promise.all((run.preds.get(id) ?? []).map((p) => settle(run, p)));
  const active = id === run.entryId || before.some((r) => r.taken.includes(id));
  if (!active || run.signal.aborted) return { ran: false, taken: [] };
  const reused = reusable(run, id);
  if (reused) {
    run.blocks[id] = reused.output;
    if (reused.retryOnResume) run.retryOnResume = true;
    return { ran: true, taken: reused.taken };
  }
  run.input.hooks?.onBlockStart?.(id);
  try {
    return await runAndRecord(run, block);
  } catch (err) {
    if (!run.firstError && !run.input.signal.aborted) {
      const message = err instanceof Error ? err.message : String(err);
      run.firstError = new WorkflowError(id, `Block "${block.name ?? id}" failed: ${message}`, {
        [id]: message,
      });
      run.failure.abort(run.firstError);
    }
    return { ran: false, taken: [] };
  }
}

/** Runs a block (with its retries) and records what it finished before its successors start. */
async function runAndRecord(run: WorkflowRun, block: Block): Promise<Settled> {
  const { input, stepScope } = run;
  const id = block.id;
  const runIt = () =>
    withRetries(block, run.signal, (trySignal) =>
      runBlock(block, {
        scope: run.scope,
        signal: trySignal,
        executionId: input.executionId,
        stepScope,
        recorded: run.recorded,
        ...(input.children ? { children: input.children } : {}),
        ...(input.paid ? { paid: input.paid } : {}),
        ...(input.llm ? { llm: llmOf(input.llm, input.executionId) } : {}),
        ...(input.lineage ? { lineage: input.lineage } : {}),
      }),
    );
  const result = await (tracingOn()
    ? withSpan(
        "block",
        () => ({
          "cellflow.block.id": id,
          "cellflow.block.type": block.type,
          "cellflow.execution.id": input.executionId,
        }),
        runIt,
      )
    : runIt());
  if (result.pause) {
    run.paused ??= { blockId: id, pause: result.pause };
    return { ran: false, taken: [] };
  }
  run.blocks[id] = result.output;
  const taken = takenEdges(block, result);
  if (result.retryOnResume) run.retryOnResume = true;
  if (result.details) mergeDetails(run, result.details);
  await recordFinished(run, block, result, taken);
  input.hooks?.onBlockComplete?.(id, result.output);
  return { ran: true, taken };
}

/** `blockId` or `blockId.path.to.value` from the blocks' outputs; null when absent. */
export function pickOutput(blocks: Record<string, unknown>, from: string): unknown {
  const [head, ...path] = from.split(".");
  let value: unknown = head === undefined ? undefined : blocks[head];
  for (const key of path) {
    if (value === null || typeof value !== "object") return null;
    value = (value as Record<string, unknown>)[key];
  }
  return value === undefined ? null : value;
}

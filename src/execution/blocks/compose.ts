/**
 * Blocks that run other workflows: `workflow` (one child with mapped inputs) and
 * `foreach` (one child per item, at most `concurrency` at once, results in item order).
 * Invariants: nesting stops at MAX_DEPTH and a workflow never runs inside itself (both
 * fail with the path in the message, not retryable); a fan-out has at most
 * MAX_FOREACH_ITEMS items (more fails the block, not retried); a child runs under its
 * parent's signal, so a Stop or a timeout ends every child; with `fail-fast` the first
 * failure aborts the running items and starts no more.
 *
 * Each item that ends `ok` is recorded (with the digest of the item, and its child run's
 * end, in one fenced write) before its slot takes the next item, at any depth, so a later
 * attempt — a re-drive after a crash, a resume — runs only the items not finished `ok`
 * with the same item at that index; only the items in flight at a crash run twice (with
 * the same Idempotency-Keys within an execution). A child that runs again reuses the
 * blocks it finished (see the executor). A fan-out that ended with failed items under
 * `continue`, or a child holding one, is marked `retryOnResume`: a resumed execution runs
 * it again, its finished items reused.
 */
import { setMaxListeners } from "node:events";
import type { ForeachBlock, WorkflowBlock, WorkflowDefinition } from "@/contracts/workflow";
import type { ChargeKey } from "@/domain/charges";
import { digestOf } from "@/domain/digest";
import { redactedExcerpt } from "@/security/redact";
import { evaluate } from "../expressions";
import {
  type BlockContext,
  BlockError,
  type BlockResult,
  type BlockRunner,
  type ItemResult,
  type StepWrite,
} from "./types";

export const MAX_DEPTH = 8;
export const DEFAULT_FOREACH_CONCURRENCY = 5;
export const MAX_FOREACH_ITEMS = 10_000;

/**
 * What a child run returned, whether it holds failed items a resume runs again, and the
 * paid answers in it that no write of its own recorded (a run without a ledger).
 */
export interface ChildResult {
  output: unknown;
  retryOnResume: boolean;
  charges: readonly ChargeKey[];
}

/** The executor's entry point, passed in to keep the module graph acyclic. */
export type RunChild = (args: {
  definition: WorkflowDefinition;
  inputs: Record<string, unknown>;
  ctx: BlockContext;
  executionId: string;
  /** The child's place in the execution (its id after the cell's execution id). */
  stepScope: string;
  path: string[];
  /**
   * What called it, for its record: the block, the item (foreach), the workflow. An
   * item's end, when it ends `ok`, is written by the fan-out with the item's record.
   */
  call: { blockId: string; index: number | null; workflowId: string };
}) => Promise<ChildResult>;

/** The child's execution id and its scope, from the caller's and the call's own part. */
function childIds(ctx: BlockContext, part: string): { executionId: string; stepScope: string } {
  return {
    executionId: `${ctx.executionId}:${part}`,
    stepScope: ctx.stepScope ? `${ctx.stepScope}:${part}` : part,
  };
}

async function child(
  blockId: string,
  workflowId: string,
  ctx: BlockContext,
): Promise<{ definition: WorkflowDefinition; path: string[] }> {
  const children = ctx.children;
  if (!children)
    throw new BlockError(blockId, "sub-workflows are not available here", { retryable: false });
  const path = [...children.path, workflowId];
  if (children.path.includes(workflowId))
    throw new BlockError(blockId, `workflow cycle: ${path.join(" → ")}`, { retryable: false });
  if (path.length > MAX_DEPTH)
    throw new BlockError(
      blockId,
      `sub-workflows nest deeper than ${MAX_DEPTH}: ${path.join(" → ")}`,
      { retryable: false },
    );
  const definition = await children.load(workflowId);
  if (!definition)
    throw new BlockError(
      blockId,
      `workflow ${workflowId} does not exist (or has no deployed version)`,
      { retryable: false },
    );
  return { definition, path };
}

export function workflowRunner(runChild: RunChild): BlockRunner<WorkflowBlock> {
  return async (block, ctx) => {
    const { definition, path } = await child(block.id, block.workflowId, ctx);
    const inputs: Record<string, unknown> = {};
    for (const [name, expression] of Object.entries(block.inputs ?? {}))
      inputs[name] = await evaluate(expression, ctx.scope);
    const out = await runChild({
      definition,
      inputs,
      ctx,
      ...childIds(ctx, block.id),
      path,
      call: { blockId: block.id, index: null, workflowId: block.workflowId },
    });
    return {
      output: out.output,
      ...(out.retryOnResume ? { retryOnResume: true } : {}),
      ...(out.charges.length > 0 ? { charges: out.charges } : {}),
    };
  };
}

/** One fan-out of a `foreach` block: what its slots share while they take items. */
interface FanOut {
  block: ForeachBlock;
  ctx: BlockContext;
  definition: WorkflowDefinition;
  path: string[];
  items: unknown[];
  failFast: boolean;
  /** Aborted by fail-fast's first failure or by a record that could not be written. */
  stop: AbortController;
  signal: AbortSignal;
  results: ItemResult[];
  /** Some item (reused or run) holds failed items deeper down: a resume runs it again. */
  partial: boolean;
  next: number;
  firstFailure?: { index: number; error: string };
  /** An item's record that could not be written ends the fan-out (after its running items). */
  unrecorded?: unknown;
  /** Paid answers of items no record holds (no ledger): they go up with the block's result. */
  charges: ChargeKey[];
}

const itemKey = (block: ForeachBlock, index: number) => `${block.id}#${index}`;

export function foreachRunner(runChild: RunChild): BlockRunner<ForeachBlock> {
  return async (block, ctx) => {
    const items = await foreachItems(block, ctx);
    const { definition, path } = await child(block.id, block.workflowId, ctx);
    const stop = new AbortController();
    const fan: FanOut = {
      block,
      ctx,
      definition,
      path,
      items,
      failFast: (block.failurePolicy ?? "fail-fast") === "fail-fast",
      stop,
      signal: AbortSignal.any([ctx.signal, stop.signal]),
      results: new Array(items.length),
      partial: false,
      next: 0,
      charges: [],
    };
    // Each running item's workflow run listens to this signal: up to `concurrency` at once,
    // past the default of 10 that makes Node warn of a leak.
    setMaxListeners(0, fan.signal);
    reuseFinishedItems(fan);
    const concurrency = Math.min(
      block.concurrency ?? DEFAULT_FOREACH_CONCURRENCY,
      Math.max(1, items.length),
    );
    await Promise.all(Array.from({ length: concurrency }, () => takeItems(fan, runChild)));
    return fanOutResult(fan);
  };
}

/** The items to fan out over: an array, of at most MAX_FOREACH_ITEMS. */
async function foreachItems(block: ForeachBlock, ctx: BlockContext): Promise<unknown[]> {
  const items = await evaluate(block.items, ctx.scope);
  if (!Array.isArray(items))
    throw new BlockError(
      block.id,
      `items must be an array, got ${redactedExcerpt(JSON.stringify(items), ctx.scope.secrets, 100)}`,
      { retryable: false },
    );
  if (items.length > MAX_FOREACH_ITEMS)
    throw new BlockError(
      block.id,
      `foreach: ${items.length} items, at most ${MAX_FOREACH_ITEMS.toLocaleString("en-US")}`,
      { retryable: false },
    );
  return items;
}

/** Items an earlier attempt finished are not run again, if the item is the same one. */
function reuseFinishedItems(fan: FanOut): void {
  const { ctx } = fan;
  if (!ctx.recorded || ctx.recorded.size === 0) return;
  fan.items.forEach((item: unknown, index) => {
    const recorded = ctx.recorded?.get(itemKey(fan.block, index));
    if (!recorded || recorded.digest !== digestOf(item)) return;
    fan.results[index] = { status: "ok", output: recorded.output };
    if (recorded.retryOnResume) fan.partial = true;
  });
}

/** One slot: takes the next item not yet finished until none is left or the fan-out stops. */
async function takeItems(fan: FanOut, runChild: RunChild): Promise<void> {
  for (;;) {
    if (fan.signal.aborted) return;
    const index = fan.next++;
    if (index >= fan.items.length) return;
    if (fan.results[index]) continue;
    const ids = childIds(fan.ctx, `${fan.block.id}:${index}`);
    const done = await runItem(fan, runChild, index, ids);
    if (done === "stopped") return;
    if (!done) continue;
    if (!(await recordItem(fan, ids.executionId, done))) return;
  }
}

/** Runs one item's child: its record when it ended `ok`, "stopped" when the fan-out stopped. */
async function runItem(
  fan: FanOut,
  runChild: RunChild,
  index: number,
  ids: { executionId: string; stepScope: string },
): Promise<StepWrite | "stopped" | undefined> {
  const { block, ctx, signal } = fan;
  const item: unknown = fan.items[index];
  const fields = item !== null && typeof item === "object" && !Array.isArray(item) ? item : {};
  try {
    const out = await runChild({
      definition: fan.definition,
      inputs: { ...fields, item, index },
      ctx: { ...ctx, signal },
      ...ids,
      path: fan.path,
      call: { blockId: block.id, index, workflowId: block.workflowId },
    });
    fan.results[index] = { status: "ok", output: out.output };
    if (out.retryOnResume) fan.partial = true;
    return {
      scope: ctx.stepScope ?? "",
      key: itemKey(block, index),
      record: {
        digest: digestOf(item),
        output: out.output,
        taken: [],
        retryOnResume: out.retryOnResume,
      },
      charges: out.charges,
    };
  } catch (err) {
    // Stopped, or cut short by fail-fast after another item failed: no end of its
    // own (a later attempt runs it again).
    if (signal.aborted) return "stopped";
    const error = err instanceof Error ? err.message : String(err);
    fan.results[index] = { status: "error", error };
    if (fan.failFast && !fan.firstFailure) {
      fan.firstFailure = { index, error };
      fan.stop.abort(new Error("another item failed"));
    }
    return undefined;
  }
}

/** Records an item that ended `ok` (or keeps its charges, with no ledger); false stops the slot. */
async function recordItem(fan: FanOut, executionId: string, done: StepWrite): Promise<boolean> {
  const { ctx } = fan;
  if (!ctx.lineage) {
    fan.charges.push(...done.charges);
    return true;
  }
  try {
    await ctx.lineage.itemDone(executionId, done);
    ctx.recorded?.set(done.key, done.record);
    return true;
  } catch (err) {
    fan.unrecorded ??= err;
    fan.stop.abort(err);
    return false;
  }
}

/** The block's result once every slot has stopped, or why it failed. */
function fanOutResult(fan: FanOut): BlockResult {
  const { block, ctx } = fan;
  if (ctx.signal.aborted) throw ctx.signal.reason;
  if (fan.unrecorded !== undefined) throw fan.unrecorded;
  if (fan.firstFailure)
    throw new BlockError(
      block.id,
      `item ${fan.firstFailure.index} failed: ${fan.firstFailure.error}`,
      { retryable: false },
    );
  const done = Array.from(fan.results, (r) => r ?? { status: "error" as const, error: "not run" });
  const failed = done.filter((r) => r.status === "error").length;
  return {
    output: { results: done, ok: done.length - failed, failed },
    ...(failed > 0 || fan.partial ? { retryOnResume: true } : {}),
    ...(fan.charges.length > 0 ? { charges: fan.charges } : {}),
  };
}

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
import type { ForeachBlock, WorkflowBlock, WorkflowDefinition } from "@/contracts/workflow";
import type { ChargeKey } from "@/domain/charges";
import { digestOf } from "@/domain/digest";
import { redactedExcerpt } from "@/security/redact";
import { evaluate } from "../expressions";
import {
  type BlockContext,
  BlockError,
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
      {
        retryable: false,
      },
    );
  const definition = await children.load(workflowId);
  if (!definition)
    throw new BlockError(
      blockId,
      `workflow ${workflowId} does not exist (or has no deployed version)`,
      {
        retryable: false,
      },
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

export function foreachRunner(runChild: RunChild): BlockRunner<ForeachBlock> {
  return async (block, ctx) => {
    const items = await evaluate(block.items, ctx.scope);
    if (!Array.isArray(items))
      throw new BlockError(
        block.id,
        `items must be an array, got ${redactedExcerpt(JSON.stringify(items), ctx.scope.secrets, 100)}`,
        {
          retryable: false,
        },
      );
    if (items.length > MAX_FOREACH_ITEMS)
      throw new BlockError(
        block.id,
        `foreach: ${items.length} items, at most ${MAX_FOREACH_ITEMS.toLocaleString("en-US")}`,
        { retryable: false },
      );
    const { definition, path } = await child(block.id, block.workflowId, ctx);
    const failFast = (block.failurePolicy ?? "fail-fast") === "fail-fast";
    const stop = new AbortController();
    const signal = AbortSignal.any([ctx.signal, stop.signal]);
    const results: ItemResult[] = new Array(items.length);
    const keyOf = (index: number) => `${block.id}#${index}`;
    // Some item (reused or run) holds failed items deeper down: a resume runs it again.
    let partial = false;
    // Items an earlier attempt finished are not run again, if the item is the same one.
    if (ctx.recorded && ctx.recorded.size > 0)
      items.forEach((item: unknown, index) => {
        const recorded = ctx.recorded?.get(keyOf(index));
        if (!recorded || recorded.digest !== digestOf(item)) return;
        results[index] = { status: "ok", output: recorded.output };
        if (recorded.retryOnResume) partial = true;
      });
    let next = 0;
    let firstFailure: { index: number; error: string } | undefined;
    // An item's record that could not be written ends the fan-out (after its running items).
    let unrecorded: unknown;
    // Paid answers of items no record holds (no ledger): they go up with the block's result.
    const charges: ChargeKey[] = [];
    const worker = async (): Promise<void> => {
      for (;;) {
        if (signal.aborted) return;
        const index = next++;
        if (index >= items.length) return;
        if (results[index]) continue;
        const item: unknown = items[index];
        const fields =
          item !== null && typeof item === "object" && !Array.isArray(item) ? item : {};
        const ids = childIds(ctx, `${block.id}:${index}`);
        let done: StepWrite | undefined;
        try {
          const out = await runChild({
            definition,
            inputs: { ...fields, item, index },
            ctx: { ...ctx, signal },
            ...ids,
            path,
            call: { blockId: block.id, index, workflowId: block.workflowId },
          });
          results[index] = { status: "ok", output: out.output };
          if (out.retryOnResume) partial = true;
          done = {
            scope: ctx.stepScope ?? "",
            key: keyOf(index),
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
          if (signal.aborted) return;
          const error = err instanceof Error ? err.message : String(err);
          results[index] = { status: "error", error };
          if (failFast && !firstFailure) {
            firstFailure = { index, error };
            stop.abort(new Error("another item failed"));
          }
        }
        if (!done) continue;
        if (!ctx.lineage) {
          charges.push(...done.charges);
          continue;
        }
        try {
          await ctx.lineage.itemDone(ids.executionId, done);
          ctx.recorded?.set(done.key, done.record);
        } catch (err) {
          unrecorded ??= err;
          stop.abort(err);
          return;
        }
      }
    };
    const concurrency = Math.min(
      block.concurrency ?? DEFAULT_FOREACH_CONCURRENCY,
      Math.max(1, items.length),
    );
    await Promise.all(Array.from({ length: concurrency }, worker));
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (unrecorded !== undefined) throw unrecorded;
    if (firstFailure)
      throw new BlockError(block.id, `item ${firstFailure.index} failed: ${firstFailure.error}`, {
        retryable: false,
      });
    const done = Array.from(results, (r) => r ?? { status: "error" as const, error: "not run" });
    const failed = done.filter((r) => r.status === "error").length;
    return {
      output: { results: done, ok: done.length - failed, failed },
      ...(failed > 0 || partial ? { retryOnResume: true } : {}),
      ...(charges.length > 0 ? { charges } : {}),
    };
  };
}

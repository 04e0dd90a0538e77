/**
 * Blocks that run other workflows: `workflow` (one child with mapped inputs) and
 * `foreach` (one child per item, at most `concurrency` at once, results in item order).
 * Invariants: nesting stops at MAX_DEPTH and a workflow never runs inside itself (both
 * fail with the path in the message, not retryable); a child runs under its parent's
 * signal, so a Stop or a timeout ends every child; with `fail-fast` the first failure
 * aborts the running items and starts no more. Children are not checkpointed one by
 * one: the block is, when it finishes; a re-run child sends the same Idempotency-Keys.
 */
import type { ForeachBlock, WorkflowBlock, WorkflowDefinition } from "@/contracts/workflow";
import { redactedExcerpt } from "@/security/redact";
import { evaluate } from "../expressions";
import { type BlockContext, BlockError, type BlockRunner } from "./types";

export const MAX_DEPTH = 8;
export const DEFAULT_FOREACH_CONCURRENCY = 5;

/** The executor's entry point, passed in to keep the module graph acyclic. */
export type RunChild = (args: {
  definition: WorkflowDefinition;
  inputs: Record<string, unknown>;
  ctx: BlockContext;
  executionId: string;
  path: string[];
}) => Promise<unknown>;

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
    const output = await runChild({
      definition,
      inputs,
      ctx,
      executionId: `${ctx.executionId}:${block.id}`,
      path,
    });
    return { output };
  };
}

type ItemResult = { status: "ok"; output: unknown } | { status: "error"; error: string };

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
    const { definition, path } = await child(block.id, block.workflowId, ctx);
    const failFast = (block.failurePolicy ?? "fail-fast") === "fail-fast";
    const stop = new AbortController();
    const signal = AbortSignal.any([ctx.signal, stop.signal]);
    const results: ItemResult[] = new Array(items.length);
    let next = 0;
    let firstFailure: { index: number; error: string } | undefined;
    const worker = async (): Promise<void> => {
      for (;;) {
        if (signal.aborted) return;
        const index = next++;
        if (index >= items.length) return;
        const item: unknown = items[index];
        const fields =
          item !== null && typeof item === "object" && !Array.isArray(item) ? item : {};
        try {
          const output = await runChild({
            definition,
            inputs: { ...fields, item, index },
            ctx: { ...ctx, signal },
            executionId: `${ctx.executionId}:${block.id}:${index}`,
            path,
          });
          results[index] = { status: "ok", output };
        } catch (err) {
          if (ctx.signal.aborted) return;
          const error = err instanceof Error ? err.message : String(err);
          results[index] = { status: "error", error };
          if (failFast && !firstFailure) {
            firstFailure = { index, error };
            stop.abort(new Error("another item failed"));
          }
        }
      }
    };
    const concurrency = Math.min(
      block.concurrency ?? DEFAULT_FOREACH_CONCURRENCY,
      Math.max(1, items.length),
    );
    await Promise.all(Array.from({ length: concurrency }, worker));
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (firstFailure)
      throw new BlockError(block.id, `item ${firstFailure.index} failed: ${firstFailure.error}`, {
        retryable: false,
      });
    const done = Array.from(results, (r) => r ?? { status: "error" as const, error: "not run" });
    const failed = done.filter((r) => r.status === "error").length;
    return { output: { results: done, ok: done.length - failed, failed } };
  };
}

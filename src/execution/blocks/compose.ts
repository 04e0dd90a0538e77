/**
 * Blocks that run other workflows: `workflow` (one child with mapped inputs) and
 * `foreach` (one child per item, at most `concurrency` at once, results in item order).
 * Invariants: nesting stops at MAX_DEPTH and a workflow never runs inside itself (both
 * fail with the path in the message, not retryable); a child runs under its parent's
 * signal, so a Stop or a timeout ends every child; with `fail-fast` the first failure
 * aborts the running items and starts no more. Each item's end (ok or error) is recorded
 * (`ctx.items`, fenced by the attempt) before its slot takes the next item, so a later
 * attempt of the execution — a re-drive after a crash, a resume — runs only the items not
 * finished `ok`, at the same concurrency; only the items in flight at a crash run twice
 * (with the same Idempotency-Keys). A fan-out that ended with failed items under
 * `continue` is run again by a resumed execution, its finished items reused.
 */
import type { ForeachBlock, WorkflowBlock, WorkflowDefinition } from "@/contracts/workflow";
import type { ChargeKey } from "@/domain/charges";
import { redactedExcerpt } from "@/security/redact";
import { evaluate } from "../expressions";
import { type BlockContext, BlockError, type BlockRunner, type ItemResult } from "./types";

export const MAX_DEPTH = 8;
export const DEFAULT_FOREACH_CONCURRENCY = 5;

/** The executor's entry point, passed in to keep the module graph acyclic. */
export type RunChild = (args: {
  definition: WorkflowDefinition;
  inputs: Record<string, unknown>;
  ctx: BlockContext;
  executionId: string;
  path: string[];
  /** What called it, for its record: the block, the item (foreach), the workflow. */
  call: { blockId: string; index: number | null; workflowId: string };
}) => Promise<ChildOutput>;

/** A child's result, and the paid answers in it that no write has recorded yet. */
export interface ChildOutput {
  output: unknown;
  charges: readonly ChargeKey[];
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
    const { output, charges } = await runChild({
      definition,
      inputs,
      ctx,
      executionId: `${ctx.executionId}:${block.id}`,
      path,
      call: { blockId: block.id, index: null, workflowId: block.workflowId },
    });
    return { output, charges };
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
    const { definition, path } = await child(block.id, block.workflowId, ctx);
    const failFast = (block.failurePolicy ?? "fail-fast") === "fail-fast";
    const stop = new AbortController();
    const signal = AbortSignal.any([ctx.signal, stop.signal]);
    const results: ItemResult[] = new Array(items.length);
    // Items an earlier attempt of this execution finished are not run again.
    for (const [index, output] of ctx.items?.finished(block.id) ?? [])
      if (index < items.length) results[index] = { status: "ok", output };
    let next = 0;
    let firstFailure: { index: number; error: string } | undefined;
    // An item's record that could not be written ends the fan-out (after its running items).
    let unrecorded: unknown;
    // Paid answers of items no record holds (a fan-out inside a child): they go up with
    // the block's result.
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
        let result: ItemResult;
        let itemCharges: readonly ChargeKey[] = [];
        try {
          const { output, charges: paid } = await runChild({
            definition,
            inputs: { ...fields, item, index },
            ctx: { ...ctx, signal },
            executionId: `${ctx.executionId}:${block.id}:${index}`,
            path,
            call: { blockId: block.id, index, workflowId: block.workflowId },
          });
          result = { status: "ok", output };
          itemCharges = paid;
        } catch (err) {
          // Stopped, or cut short by fail-fast after another item failed: no end of its
          // own (a later attempt runs it again).
          if (signal.aborted) return;
          const error = err instanceof Error ? err.message : String(err);
          result = { status: "error", error };
          if (failFast && !firstFailure) {
            firstFailure = { index, error };
            stop.abort(new Error("another item failed"));
          }
        }
        results[index] = result;
        if (!ctx.items) charges.push(...itemCharges);
        try {
          await ctx.items?.record(block.id, index, result, itemCharges);
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
      ...(failed > 0 ? { retryOnResume: true } : {}),
      ...(charges.length > 0 ? { charges } : {}),
    };
  };
}

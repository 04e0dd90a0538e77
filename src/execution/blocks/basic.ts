import type {
  ApprovalBlock,
  ConditionBlock,
  FailBlock,
  TransformBlock,
  WaitBlock,
} from "@/contracts/workflow";
import { sleep } from "@/domain/sleep";
import { evaluate, renderTemplate } from "../expressions";
import { BlockError, type BlockRunner } from "./types";

export const runTransform: BlockRunner<TransformBlock> = async (block, ctx) => ({
  output: await evaluate(block.expression, ctx.scope),
});

export const runCondition: BlockRunner<ConditionBlock> = async (block, ctx) => {
  const value = await evaluate(block.expression, ctx.scope);
  const taken = Boolean(value);
  return { output: taken, port: taken ? "true" : "false" };
};

export const runFail: BlockRunner<FailBlock> = async (block, ctx) => {
  throw new BlockError(block.id, await renderTemplate(block.message, ctx.scope));
};

const MAX_WAIT_MS = 30 * 24 * 3_600_000;
/**
 * Longer waits pause the cell and free the worker: a delayed carrier resumes it when due
 * (on trigger.dev a process waiting past 60 s would be checkpointed, sockets and all).
 */
export const LONG_WAIT_MS = 5 * 60_000;

/** Waits in process (an abort ends the wait at once), or pauses the run when long. */
export const runWait: BlockRunner<WaitBlock> = async (block, ctx) => {
  const value = typeof block.ms === "number" ? block.ms : await evaluate(block.ms, ctx.scope);
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new BlockError(
      block.id,
      `the wait time must be a number of milliseconds, got ${JSON.stringify(value)}`,
    );
  }
  const ms = Math.min(Math.round(value), MAX_WAIT_MS);
  if (ms > LONG_WAIT_MS)
    return {
      output: null,
      pause: { reason: "wait", resumeAt: Date.now() + ms, output: { waitedMs: ms } },
    };
  await sleep(ms, ctx.signal);
  return { output: { waitedMs: ms } };
};

/** Pauses the run until someone resumes the cell; the data they send is the output. */
export const runApproval: BlockRunner<ApprovalBlock> = async () => ({
  output: null,
  pause: { reason: "approval" },
});

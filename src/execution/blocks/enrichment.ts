/**
 * The enrichment block: a registry enrichment on inputs computed by expressions. Its
 * output is the enrichment's outputs object, every output id present (null where nothing
 * was found, and all null for skipped or not_found), so later blocks can read fields
 * without guarding. Every provider failing is a BlockError with their reasons, retryable
 * when one of them may succeed later; an unknown id or a bad input is not retryable.
 * A provider's answer goes out with the block's result as a charge, for the write that
 * records the output to settle; no other end is charged.
 */
import type { EnrichmentBlock } from "@/contracts/workflow";
import { getEnrichment } from "@/enrichments/registry";
import { runEnrichment } from "@/enrichments/run";
import { EnrichmentError, isPaidAnswer } from "@/enrichments/types";
import { evaluate } from "../expressions";
import { BlockError, type BlockRunner } from "./types";

export const runEnrichmentBlock: BlockRunner<EnrichmentBlock> = async (block, ctx) => {
  const enrichment = getEnrichment(block.enrichmentId);
  if (!enrichment) {
    throw new BlockError(block.id, `the enrichment "${block.enrichmentId}" does not exist`, {
      retryable: false,
    });
  }
  const inputs: Record<string, unknown> = {};
  for (const [name, expression] of Object.entries(block.inputs)) {
    try {
      inputs[name] = await evaluate(expression, ctx.scope);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new BlockError(block.id, `the expression for input "${name}" failed: ${message}`, {
        retryable: false,
      });
    }
  }
  // Reserved once per execution (a sub-workflow item has its own) and block; paced.
  const gate = ctx.paid?.({
    source: `${enrichment.id}@${block.id}`,
    chargeId: ctx.executionId,
    credits: enrichment.cost,
  });
  try {
    const result = await runEnrichment(enrichment, inputs, {
      signal: ctx.signal,
      secrets: ctx.scope.secrets,
      ...gate,
    });
    // A provider's answer is charged by the write that records this block's output;
    // anything else gives its reservation back now.
    if (gate && isPaidAnswer(result)) return { output: result.outputs, charges: [gate.charge] };
    await gate?.release();
    return { output: result.outputs };
  } catch (err) {
    await gate?.release();
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (err instanceof EnrichmentError)
      throw new BlockError(block.id, err.message, { retryable: err.retryable });
    throw err;
  }
};

/**
 * The gate in front of an attempt's llm calls (the llm block's `ctx.llm`). Invariants, as
 * for enrichments (paid-calls.ts): each call's charge key (`llm:<model>@<blockId>`,
 * `#repair` after it for the schema-repair call, under the execution whose block calls) is
 * admitted — the call's estimated cost (its input tokens at the model's input price plus
 * its output cap at the output price, CELLFLOW_LLM_PRICES) reserved under every cap — before
 * the call, or the attempt ends through `onHalt` and the error is thrown (the month's
 * credits or the run's cap: halted, the cell un-run; the row's budget: the cell
 * `over_budget`; a cell no longer held: no call); a model without a price reserves and
 * charges nothing. Then the call waits its turn at the workspace's limits for the model
 * (requests and tokens per minute), as long as the attempt lives. After the answer the
 * charge is priced from the real usage and goes, with the amount (`milli`), to the fenced
 * write that records the block's output, which charges it in place of the estimate
 * (store/usage/settle.ts); a call without an answer gives its reservation and its turn
 * back at once (the trigger would at the attempt's end). Where runs are separate processes
 * (trigger.dev), a per-process limiter is refused before anything is reserved or called.
 * Per attempt it only builds closures: nothing is read or written until a block calls.
 */
import { llmPriceOf } from "@/config/llm-prices";
import type { ChargeKey } from "@/domain/charges";
import { llmCostMilli } from "@/domain/llm-pricing";
import { LostAuthority, RowBudgetExceeded, SharedLimiterRequired, UsageLimitHalt } from "@/errors";
import type { LlmCallPlan, LlmCalls, LlmTurn } from "@/execution/llm-calls";
import { coolLlmKey, type LlmGrant, paceLlmCall } from "@/limits/rate/llm";
import { sharedLimiterRefusal } from "@/limits/rate/port";
import { attemptSuperseded } from "@/store/engine-reads";
import { releaseCharge } from "@/store/usage/release";
import { admitCall } from "./admission";
import type { PaidAttempt, PaidEngine } from "./paid-calls";
import { resultCache } from "./result-cache";

/** The charge key of one call: per block and per kind of call, under the calling execution. */
export function llmChargeKey(plan: LlmCallPlan, executionId: string): ChargeKey {
  return {
    chargeId: plan.chargeId ?? executionId,
    source: `llm:${plan.model}@${plan.blockId}${plan.call === "repair" ? "#repair" : ""}`,
  };
}

export function llmCalls(
  engine: PaidEngine,
  a: PaidAttempt,
  onHalt: (
    halt: UsageLimitHalt | RowBudgetExceeded | SharedLimiterRequired | LostAuthority,
  ) => void,
  opts: {
    /** The attempt's deadline (epoch ms): the pacing reserves no turn past it. */
    deadlineAt?: number;
    onCacheError?: (err: unknown) => void;
  } = {},
): LlmCalls {
  const { db } = engine.locks;
  const cell = {
    rowId: a.rowId,
    groupId: a.groupId,
    executionId: a.executionId,
    attempt: a.attempt,
  };
  const refusal = engine.requireSharedLimiter
    ? sharedLimiterRefusal(engine.lines.limiter.kind)
    : undefined;
  const cacheTtlMs = engine.enrichmentCacheTtlMs;
  const cache =
    cacheTtlMs > 0
      ? resultCache(db, a.workspaceId, {
          ttlMs: cacheTtlMs,
          ...(opts.onCacheError ? { onError: opts.onCacheError } : {}),
        })
      : undefined;
  // Best effort: what this misses, the trigger releases when the attempt ends.
  const release = (charge: ChargeKey) => releaseCharge(db, { cell, charge }).catch(() => undefined);

  async function begin(plan: LlmCallPlan, signal: AbortSignal): Promise<LlmTurn> {
    // Before the reservation: a refused call is neither reserved nor made.
    if (refusal) {
      const refused = new SharedLimiterRequired(refusal);
      onHalt(refused);
      throw refused;
    }
    const price = llmPriceOf(plan.model);
    const charge = llmChargeKey(plan, a.executionId);
    const estimate = llmCostMilli(price, {
      inputTokens: plan.inputTokens,
      outputTokens: plan.maxTokens,
    });
    const reserved = estimate > 0;
    if (reserved) {
      const credits = estimate / 1000;
      const admission = await admitCall(db, { ...a, charge, credits });
      if (admission !== "admitted") {
        const end =
          admission === "halted"
            ? new UsageLimitHalt()
            : admission === "over_budget"
              ? new RowBudgetExceeded(charge.source, credits)
              : new LostAuthority("stale");
        onHalt(end);
        throw end;
      }
    }
    let grant: LlmGrant;
    try {
      grant = await paceLlmCall(
        engine.lines,
        a.workspaceId,
        a.plan,
        plan.model,
        plan.inputTokens + plan.maxTokens,
        {
          signal,
          ...(opts.deadlineAt !== undefined ? { deadlineAt: opts.deadlineAt } : {}),
          isStopped: () => attemptSuperseded(db, cell),
        },
      );
    } catch (err) {
      // No turn, no call: the reservation goes back now.
      if (reserved) await release(charge);
      throw err;
    }
    let ended = false;
    return {
      answered: async (usage) => {
        if (ended) throw new Error(`llm call of block "${plan.blockId}" already ended`);
        ended = true;
        await grant.settle(usage.inputTokens + usage.outputTokens);
        const milli = llmCostMilli(price, usage);
        // Only a reservation is ever charged: a call estimated at 0 costs 0 whatever it used.
        if (milli === 0 || !reserved) {
          if (reserved) await release(charge);
          return { costCredits: 0, charge: null };
        }
        return { costCredits: milli / 1000, charge: { ...charge, milli } };
      },
      failed: async () => {
        if (ended) return;
        ended = true;
        await grant.release().catch(() => undefined);
        if (reserved) await release(charge);
      },
      busy: (retryAfterMs) => coolLlmKey(engine.lines, a.workspaceId, plan.model, retryAfterMs),
    };
  }

  return { begin, ...(cache ? { cache } : {}) };
}

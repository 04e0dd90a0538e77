/**
 * One llm call's turn, the part the two gates in front of llm calls share (a cell's
 * attempt: llm-calls.ts; a test run: test-run-gate.ts), so a test run and a table's cells
 * take one requests- and tokens-per-minute budget under one key and are charged by one
 * rule. Invariants, in this order:
 * - The call's charge key is `llm:<model>@<blockId>` (`#repair` after it for the repair
 *   call) under the execution whose block calls (`plan.chargeId`, a sub-workflow's or a
 *   foreach item's own, else the caller's).
 * - Its estimate (input tokens at the input price plus `maxTokens` at the output price,
 *   CELLFLOW_LLM_PRICES) is reserved through the gate's `money` before anything else; a
 *   model without a price reserves nothing. What refuses it is thrown as the gate throws it.
 * - Then the call waits its turn at the workspace's limits for the model (paceLlmCall,
 *   `inputTokens + maxTokens` reserved at the tokens limit); no turn (a Stop, the deadline,
 *   a reservation over the tokens per minute: OverRateLimit) gives the credits back first
 *   and throws, no call made.
 * - Ended once: `answered` settles the limits with the real tokens, then prices the real
 *   usage — the charge with that amount (`milli`) for the write that records the answer,
 *   or, at 0 or with nothing reserved, the reservation given back and no charge; `failed`
 *   gives the turn back, then the credits. `busy` cools the key for every worker.
 */
import { llmPriceOf } from "@/config/llm-prices";
import type { ChargeKey } from "@/domain/charges";
import { llmCostMilli } from "@/domain/llm-pricing";
import type { Plan } from "@/domain/statuses";
import type { LlmCallPlan, LlmTurn } from "@/execution/llm-calls";
import type { RateLines } from "@/limits/rate/line";
import { coolLlmKey, type LlmGrant, paceLlmCall } from "@/limits/rate/llm";
import type { PaceOptions } from "@/limits/rate/pace";

/** The charge key of one call: per block and per kind of call, under the calling execution. */
export function llmChargeKey(plan: LlmCallPlan, executionId: string): ChargeKey {
  return {
    chargeId: plan.chargeId ?? executionId,
    source: `llm:${plan.model}@${plan.blockId}${plan.call === "repair" ? "#repair" : ""}`,
  };
}

/** Where a gate keeps a call's credits: a cell's ledger, or a test run's. */
export interface LlmMoney {
  /** Reserves `milli` (> 0) under `charge`; throws what refused it (the gate ended the run). */
  reserve(charge: ChargeKey, milli: number): Promise<void>;
  /** Gives the reservation back (best effort: what it misses, the run's end releases). */
  release(charge: ChargeKey): Promise<void>;
}

export interface LlmTurnRequest {
  lines: RateLines;
  workspaceId: string;
  plan: Plan;
  /** Charge keys are under this execution unless the call names its own (`chargeId`). */
  executionId: string;
  money: LlmMoney;
  /** The wait for the turn: the signal, the deadline, the tombstone check. */
  pace: Omit<PaceOptions, "coolDowns" | "weight">;
}

export async function beginLlmTurn(r: LlmTurnRequest, call: LlmCallPlan): Promise<LlmTurn> {
  const price = llmPriceOf(call.model);
  const charge = llmChargeKey(call, r.executionId);
  const estimate = llmCostMilli(price, {
    inputTokens: call.inputTokens,
    outputTokens: call.maxTokens,
  });
  const reserved = estimate > 0;
  if (reserved) await r.money.reserve(charge, estimate);
  let grant: LlmGrant;
  try {
    grant = await paceLlmCall(
      r.lines,
      r.workspaceId,
      r.plan,
      call.model,
      call.inputTokens + call.maxTokens,
      r.pace,
    );
  } catch (err) {
    // No turn, no call: the reservation goes back now.
    if (reserved) await r.money.release(charge);
    throw err;
  }
  let ended = false;
  let refused = false;
  const provider = `llm:${call.model}`;
  const metrics = r.lines.metrics;
  return {
    answered: async (usage) => {
      if (ended) throw new Error(`llm call of block "${call.blockId}" already ended`);
      ended = true;
      metrics?.providerCall(provider, "found");
      await grant.settle(usage.inputTokens + usage.outputTokens);
      const milli = llmCostMilli(price, usage);
      // Only a reservation is ever charged: a call estimated at 0 costs 0 whatever it used.
      if (milli === 0 || !reserved) {
        if (reserved) await r.money.release(charge);
        return { costCredits: 0, charge: null };
      }
      metrics?.charged(provider, milli / 1000);
      return { costCredits: milli / 1000, charge: { ...charge, milli } };
    },
    failed: async () => {
      if (ended) return;
      ended = true;
      metrics?.providerCall(provider, refused ? "refused" : "error");
      await grant.release().catch(() => undefined);
      if (reserved) await r.money.release(charge);
    },
    busy: (retryAfterMs) => {
      refused = true;
      return coolLlmKey(r.lines, r.workspaceId, call.model, retryAfterMs);
    },
  };
}

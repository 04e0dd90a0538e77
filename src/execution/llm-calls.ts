/**
 * The port in front of an llm block's calls to a model: what the block asks the engine for
 * before each call (a reservation of the call's estimated credits under every cap, then its
 * turn at the shared requests- and tokens-per-minute limits), and what it says after (the
 * real usage, which settles the tokens and prices the charge; or that no answer will be
 * recorded, which gives the reservation back). The engine builds it per attempt; a block
 * run without one (no paid work allowed) calls nothing that costs credits.
 */
import type { ChargeKey } from "@/domain/charges";
import type { ResultCache } from "@/enrichments/types";

export type LlmProvider = "openai" | "anthropic";

/** One call as the block plans it, before it is made. */
export interface LlmCallPlan {
  blockId: string;
  /** `answer`: the block's call; `repair`: the second call after an answer failed its schema. */
  call: "answer" | "repair";
  provider: LlmProvider;
  model: string;
  /** ceil(characters / 4) of every message sent (`estimateTokens`). */
  inputTokens: number;
  /** The output cap sent with the call (the block's `maxTokens`, else DEFAULT_MAX_TOKENS). */
  maxTokens: number;
  /**
   * The execution whose block calls (a sub-workflow item's own): what the charge is keyed
   * under. Set by the executor (`llmOf`); the block leaves it out.
   */
  chargeId?: string;
}

export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
}

/** A call that may go now: its credits are reserved and its turn at the limits has come. */
export interface LlmTurn {
  /**
   * The model answered with this usage: the limits keep the real tokens, and the charge
   * (priced from CELLFLOW_LLM_PRICES) goes with the block's result to the write that
   * records it. `charge` is null when the call costs nothing (unknown model, price 0).
   */
  answered(usage: LlmUsage): Promise<{ costCredits: number; charge: ChargeKey | null }>;
  /** No answer of this call will be recorded (it failed, or was cut off): give back what it holds. */
  failed(): Promise<void>;
  /** The provider refused for now (a 429) and said how long: every worker holds this key that long. */
  busy(retryAfterMs: number): Promise<void>;
}

/**
 * The calls of one run of a workflow (the cell's, or a child's): each charge keyed under
 * that run's execution, so two items of a `foreach` calling one block each pay once.
 */
export function llmOf(llm: LlmCalls, executionId: string): LlmCalls {
  return {
    // A child's runs are given the parent's: the innermost execution keeps its own id.
    begin: (plan, signal) => llm.begin({ ...plan, chargeId: plan.chargeId ?? executionId }, signal),
    ...(llm.cache ? { cache: llm.cache } : {}),
  };
}

export interface LlmCalls {
  /**
   * Reserves and paces one call. Throws what ends the attempt (a cap, the row's budget, a
   * Stop, the deadline) — never a BlockError: a block must not turn a halt into its failure.
   */
  begin(plan: LlmCallPlan, signal: AbortSignal): Promise<LlmTurn>;
  /** The workspace's result cache for answers at temperature 0 (absent when its TTL is 0). */
  cache?: ResultCache;
}

/**
 * Answers of llm calls at temperature 0 kept in the workspace's result cache (the one
 * paid enrichments use, under the namespace `llm`). Invariant: the key holds everything
 * that shapes the answer — provider, resolved base URL, model, system, rendered prompt,
 * schema and output cap — so a hit is an answer the same call would have been given; the
 * cache's lease makes concurrent misses of one key a single call; an answer is kept with
 * the charge keys of its calls and not served once their charge was released.
 */
import type { ChargeKey } from "@/domain/charges";
import { digestOf } from "@/domain/digest";
import type { ResultCache } from "@/enrichments/types";
import type { LlmProvider } from "../llm-calls";

/** The cache's `enrichment_id` for llm answers. */
export const LLM_CACHE_NAMESPACE = "llm";

export interface AnswerKey {
  provider: LlmProvider;
  baseUrl: string;
  model: string;
  system: string | null;
  prompt: string;
  jsonSchema: Record<string, unknown> | null;
  maxTokens: number;
}

/** What a hit gives back: the block's output and what the answer took when it was made. */
export interface CachedAnswer {
  output: unknown;
  inputTokens: number;
  outputTokens: number;
}

export type AnswerLookup =
  | { kind: "hit"; answer: CachedAnswer }
  | {
      kind: "lease";
      /** `paidBy`: the charge keys of the calls that made it (none: free). */
      keep(answer: CachedAnswer, paidBy: readonly ChargeKey[]): Promise<void>;
      drop(): Promise<void>;
    };

export async function lookupAnswer(
  cache: ResultCache,
  key: AnswerKey,
  signal: AbortSignal,
): Promise<AnswerLookup> {
  const found = await cache.lookup(LLM_CACHE_NAMESPACE, digestOf(key), signal);
  if (found.kind === "hit") {
    const { output, inputTokens, outputTokens } = found.outputs;
    return {
      kind: "hit",
      answer: {
        output,
        inputTokens: typeof inputTokens === "number" ? inputTokens : 0,
        outputTokens: typeof outputTokens === "number" ? outputTokens : 0,
      },
    };
  }
  return {
    kind: "lease",
    keep: (answer, paidBy) =>
      found.keep(
        {
          outcome: "ok",
          outputs: { ...answer },
          details: { enrichmentId: LLM_CACHE_NAMESPACE, costCredits: 0, providers: [] },
        },
        paidBy,
      ),
    drop: () => found.drop(),
  };
}

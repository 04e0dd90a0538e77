/**
 * The price of a model from CELLFLOW_LLM_PRICES, parsed once per value of the variable
 * (the gate asks per call; validating the whole environment each time would cost more
 * than the call's bookkeeping). A model not listed costs nothing. A malformed value throws
 * here as it fails `readEnv` at startup.
 */
import type { LlmPrice } from "@/domain/llm-pricing";
import { llmPrices } from "./env";

let parsed: { raw: string | undefined; prices: Record<string, LlmPrice> } | undefined;

export function llmPriceOf(
  model: string,
  source: Record<string, string | undefined> = process.env,
): LlmPrice | undefined {
  const raw = source.CELLFLOW_LLM_PRICES;
  let current = parsed;
  if (!current || current.raw !== raw) {
    const read = llmPrices.safeParse(raw);
    if (!read.success)
      throw new Error(
        `Invalid environment: CELLFLOW_LLM_PRICES: ${read.error.issues.map((i) => i.message).join("; ")}`,
      );
    current = { raw, prices: read.data };
    parsed = current;
  }
  // Own keys only: a model named `constructor` must not find Object's.
  return Object.hasOwn(current.prices, model) ? current.prices[model] : undefined;
}

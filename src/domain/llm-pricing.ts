/**
 * What an llm call costs, in milli-credits (credits are kept to 1/1000): its tokens at the
 * model's price, rounded up to the milli-credit, so a call that used anything at a price
 * above 0 is never charged 0. A price is in credits per 1,000 tokens, which is
 * milli-credits per token. One rule for the reservation (the estimate: input tokens plus
 * the output cap) and the charge (the real usage).
 */

export interface LlmPrice {
  /** Credits per 1,000 input (prompt) tokens. */
  inputPer1k: number;
  /** Credits per 1,000 output (completion) tokens. */
  outputPer1k: number;
}

export interface LlmTokenCounts {
  inputTokens: number;
  outputTokens: number;
}

/** Milli-credits for these tokens at this price (none: the model is free). */
export function llmCostMilli(price: LlmPrice | undefined, tokens: LlmTokenCounts): number {
  if (!price) return 0;
  const exact =
    Math.max(0, tokens.inputTokens) * price.inputPer1k +
    Math.max(0, tokens.outputTokens) * price.outputPer1k;
  // To a millionth of a milli-credit first: 0.07 × 100 is 7.000000000000001 in floating
  // point, and must not round up to 8.
  return Math.ceil(Math.round(exact * 1e6) / 1e6);
}

/**
 * How many tokens a text is counted as before a call: a quarter of its characters, rounded
 * up. One rule for the rate limit's reservation, the dry run's estimate and the local test
 * server's own count, so a test can predict to the token what each of them sees.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** What an llm call asks for as output when its block sets no `maxTokens` (then also sent). */
export const DEFAULT_MAX_TOKENS = 1_024;

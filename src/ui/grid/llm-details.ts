/**
 * What a cell's model calls did, from its `details.llm` (`{ <blockId>: { model,
 * inputTokens, outputTokens, costCredits, cached } }`), for the cell's details dialog;
 * and credits as the API shows them (up to three decimals). Pure, so it is unit-tested.
 */

export interface LlmCallView {
  blockId: string;
  model: string;
  inputTokens: number | null;
  outputTokens: number | null;
  costCredits: number | null;
  cached: boolean;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** The llm blocks' calls in a cell's details, in block order; none: []. */
export function llmCalls(details: unknown): LlmCallView[] {
  if (!isRecord(details) || !isRecord(details.llm)) return [];
  return Object.entries(details.llm).flatMap(([blockId, raw]) => {
    if (!isRecord(raw)) return [];
    return [
      {
        blockId,
        model: typeof raw.model === "string" ? raw.model : "?",
        inputTokens: num(raw.inputTokens),
        outputTokens: num(raw.outputTokens),
        costCredits: num(raw.costCredits),
        cached: raw.cached === true,
      },
    ];
  });
}

/**
 * The model calls of the newest attempt that made any (attempts come newest first), with
 * that attempt; null when none did.
 */
export function latestLlmCalls<A extends { details: unknown }>(
  attempts: readonly A[],
): { attempt: A; calls: LlmCallView[] } | null {
  for (const attempt of attempts) {
    const calls = llmCalls(attempt.details);
    if (calls.length > 0) return { attempt, calls };
  }
  return null;
}

/** 0.0125 → "0.013", 2 → "2", 1.5 → "1.5": credits are kept to a thousandth. */
export function formatCredits(credits: number): string {
  const rounded = Math.round(credits * 1000) / 1000;
  return rounded.toLocaleString("en", { maximumFractionDigits: 3, useGrouping: false });
}

/** "1 credit", "0.013 credits". */
export function creditsText(credits: number): string {
  const shown = formatCredits(credits);
  return `${shown} credit${shown === "1" ? "" : "s"}`;
}

/** "1,234" for a token count; "—" when unknown. */
export function formatTokens(n: number | null): string {
  return n === null ? "—" : n.toLocaleString("en");
}

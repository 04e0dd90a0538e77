/**
 * What a model's tokens cost, from CELLFLOW_LLM_PRICES: JSON `{ "<model>": { "inputPer1k":
 * credits, "outputPer1k": credits } }` (API.md "AI (llm blocks)"). A model it does not name
 * costs nothing; a value that is not such JSON prices every model at 0 rather than failing
 * a call that already happened. Amounts are milli-credits (1/1000 of a credit), rounded up
 * so a call that used tokens of a priced model never costs 0.
 */
import { z } from "zod";

const Price = z.object({
  inputPer1k: z.number().min(0).default(0),
  outputPer1k: z.number().min(0).default(0),
});
const Prices = z.record(z.string(), Price);
type Prices = z.infer<typeof Prices>;

let parsed: { raw: string; prices: Prices } | undefined;

/** The table as the environment says now (parsed again only when it changed: tests set it). */
function prices(): Prices {
  const raw = process.env.CELLFLOW_LLM_PRICES ?? "";
  if (parsed?.raw !== raw) {
    let prices: Prices = {};
    try {
      const result = Prices.safeParse(raw === "" ? {} : JSON.parse(raw));
      if (result.success) prices = result.data;
    } catch {
      // Not JSON: no prices (see the header).
    }
    parsed = { raw, prices };
  }
  return parsed.prices;
}

/** Milli-credits for `usage` tokens of `model`: `inputPer1k` credits per 1,000 tokens = that many milli-credits per token. */
export function llmCostMilli(
  model: string,
  usage: { inputTokens: number; outputTokens: number },
): number {
  const price = Object.hasOwn(prices(), model) ? prices()[model] : undefined;
  if (!price) return 0;
  const milli = usage.inputTokens * price.inputPer1k + usage.outputTokens * price.outputPer1k;
  // Rounded to a millionth first: 100 × 0.1 is 10.000000000000002 in floating point.
  return Math.ceil(Math.round(milli * 1e6) / 1e6);
}

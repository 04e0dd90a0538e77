/**
 * What an llm call costs (src/domain/llm-pricing.ts, CELLFLOW_LLM_PRICES): milli-credits
 * per token at the model's price, rounded up to the milli-credit and never up by floating
 * point's own error; a model without a price costs nothing; a malformed price list fails
 * the environment's validation with a message that names the variable.
 */
import { describe, expect, it } from "vitest";
import { readEnv } from "@/config/env";
import { llmPriceOf } from "@/config/llm-prices";
import { llmCostMilli } from "@/domain/llm-pricing";

describe("llmCostMilli", () => {
  it("a price in credits per 1,000 tokens is milli-credits per token", () => {
    const price = { inputPer1k: 2, outputPer1k: 5 };
    expect(llmCostMilli(price, { inputTokens: 10, outputTokens: 7 })).toBe(10 * 2 + 7 * 5);
  });

  it("a fraction of a milli-credit is rounded up, so a call that used anything is charged", () => {
    const price = { inputPer1k: 0.15, outputPer1k: 0.6 };
    // 3 × 0.15 + 1 × 0.6 = 1.05 milli-credits.
    expect(llmCostMilli(price, { inputTokens: 3, outputTokens: 1 })).toBe(2);
    expect(llmCostMilli(price, { inputTokens: 1, outputTokens: 0 })).toBe(1);
  });

  it("floating point's own error does not round a whole amount up", () => {
    // 0.07 × 100 is 7.000000000000001 in floating point.
    expect(0.07 * 100).toBeGreaterThan(7);
    expect(
      llmCostMilli({ inputPer1k: 0.07, outputPer1k: 0 }, { inputTokens: 100, outputTokens: 0 }),
    ).toBe(7);
  });

  it("no price, or no tokens, costs nothing", () => {
    expect(llmCostMilli(undefined, { inputTokens: 1_000, outputTokens: 1_000 })).toBe(0);
    expect(
      llmCostMilli({ inputPer1k: 3, outputPer1k: 3 }, { inputTokens: 0, outputTokens: 0 }),
    ).toBe(0);
  });
});

describe("CELLFLOW_LLM_PRICES", () => {
  const prices = JSON.stringify({ "gpt-4o-mini": { inputPer1k: 0.15, outputPer1k: 0.6 } });

  it("gives each listed model its price; a model not listed (or named like an object's own property) has none", () => {
    const env = { CELLFLOW_LLM_PRICES: prices };
    expect(llmPriceOf("gpt-4o-mini", env)).toEqual({ inputPer1k: 0.15, outputPer1k: 0.6 });
    expect(llmPriceOf("other", env)).toBeUndefined();
    expect(llmPriceOf("constructor", env)).toBeUndefined();
    expect(llmPriceOf("gpt-4o-mini", {})).toBeUndefined();
    // A side not given costs nothing.
    expect(llmPriceOf("m", { CELLFLOW_LLM_PRICES: '{"m":{"inputPer1k":1}}' })).toEqual({
      inputPer1k: 1,
      outputPer1k: 0,
    });
    expect(readEnv({ CELLFLOW_LLM_PRICES: prices }).CELLFLOW_LLM_PRICES).toEqual({
      "gpt-4o-mini": { inputPer1k: 0.15, outputPer1k: 0.6 },
    });
    expect(readEnv({}).CELLFLOW_LLM_PRICES).toEqual({});
  });

  it.each([
    ["not JSON", "{gpt: 1}", "must be JSON"],
    ["a price that is not a number", '{"m":{"inputPer1k":"1","outputPer1k":1}}', "inputPer1k"],
    ["a negative price", '{"m":{"inputPer1k":-1,"outputPer1k":1}}', "inputPer1k"],
    ["an unknown field", '{"m":{"inputPer1k":1,"outputPer1k":1,"per":2}}', "per"],
    ["a list", "[1]", "CELLFLOW_LLM_PRICES"],
  ])("%s fails the environment's validation, naming the variable", (_, raw, says) => {
    expect(() => readEnv({ CELLFLOW_LLM_PRICES: raw })).toThrow(/CELLFLOW_LLM_PRICES/);
    expect(() => readEnv({ CELLFLOW_LLM_PRICES: raw })).toThrow(says);
    expect(() => llmPriceOf("m", { CELLFLOW_LLM_PRICES: raw })).toThrow(/CELLFLOW_LLM_PRICES/);
  });
});

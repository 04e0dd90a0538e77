import { describe, expect, it } from "vitest";
import {
  expectedMilli,
  maxTokensInAnyWindow,
  steadyTokensPerMinute,
  tokensPerMinute,
  type W7Call,
  withinShareOf,
} from "../../bench/w7-figures";

const call = (at: number, inputTokens = 50, outputTokens = 50): W7Call => ({
  at,
  inputTokens,
  outputTokens,
});
/** W7's shape: `n` calls of 100 tokens, one every `gapMs`. */
const paced = (n: number, gapMs: number, from = 0) =>
  Array.from({ length: n }, (_, i) => call(from + i * gapMs));

describe("W7's tokens per minute", () => {
  it("5,000 calls of 100 tokens, one every 20 ms, are 300,000 tokens per minute", () => {
    expect(tokensPerMinute(paced(5_000, 20))).toBe(300_000);
  });

  it("counts every call but the first over the span, in any order of the records", () => {
    expect(tokensPerMinute([call(60_000), call(0), call(30_000)])).toBe(200);
    expect(tokensPerMinute([call(0, 10, 0), call(60_000, 70, 20)])).toBe(90);
  });

  it("is 0 with no call, one call, or calls with no span between them", () => {
    expect(tokensPerMinute([])).toBe(0);
    expect(tokensPerMinute([call(5)])).toBe(0);
    expect(tokensPerMinute([call(5), call(5)])).toBe(0);
  });

  it("the steady figure leaves out the first and last trimMs: a straggler 20 s late does not lower it", () => {
    const run = [...paced(5_000, 20), call(5_000 * 20 + 20_000)];
    // 5,000 calls after the first (500,000 tokens) over 120 s.
    expect(tokensPerMinute(run)).toBe(250_000);
    expect(steadyTokensPerMinute(run, 10_000)).toBe(300_000);
    expect(steadyTokensPerMinute([], 10_000)).toBe(0);
    // A span shorter than twice the trim leaves nothing to measure.
    expect(steadyTokensPerMinute(paced(10, 1_000), 10_000)).toBe(0);
  });
});

describe("W7's most tokens in any window", () => {
  it("a window (e − w, e]: a call exactly w before another is not in its window, one a millisecond later is", () => {
    expect(maxTokensInAnyWindow([call(0), call(60_000)], 60_000)).toBe(100);
    expect(maxTokensInAnyWindow([call(1), call(60_000)], 60_000)).toBe(200);
    expect(maxTokensInAnyWindow([call(60_000), call(1), call(30_000)], 60_000)).toBe(300);
  });

  it("is 0 with no call and the call's tokens with one", () => {
    expect(maxTokensInAnyWindow([], 60_000)).toBe(0);
    expect(maxTokensInAnyWindow([call(7, 56, 45)], 60_000)).toBe(101);
  });

  it("300,000 tokens a minute paced evenly hold exactly 300,000 in the busiest minute", () => {
    expect(maxTokensInAnyWindow(paced(5_000, 20), 60_000)).toBe(300_000);
    // A burst of 4,000 calls in the first 10 s then a thousand over the next 50 s.
    const burst = [...paced(4_000, 2.5), ...paced(1_000, 50, 10_000)];
    expect(maxTokensInAnyWindow(burst, 60_000)).toBe(500_000);
    expect(maxTokensInAnyWindow(burst, 10_000)).toBe(400_000);
  });
});

describe("W7's expected credits", () => {
  const price = { inputPer1k: 0.5, outputPer1k: 1.5 };

  it("rounds each call up to the milli-credit on its own, not the sum", () => {
    // 56 × 0.5 + 45 × 1.5 = 95.5 → 96 a call: 192 for two, not 191.
    expect(expectedMilli([call(0, 56, 45)], price)).toBe(96);
    expect(expectedMilli([call(0, 56, 45), call(1, 56, 45)], price)).toBe(192);
    // 50 × 0.5 + 50 × 1.5 = 100 exactly: nothing to round.
    expect(expectedMilli(paced(5_000, 20), price)).toBe(500_000);
  });

  it("is 0 with no call, and a floating-point product does not round up a whole amount", () => {
    expect(expectedMilli([], price)).toBe(0);
    // 100 × 0.07 is 7.000000000000001 in floating point: 7, not 8.
    expect(expectedMilli([call(0, 100, 0)], { inputPer1k: 0.07, outputPer1k: 0 })).toBe(7);
  });
});

describe("within 5 % of the limit", () => {
  it("includes both ends of the band", () => {
    expect(withinShareOf(285_000, 300_000, 0.05)).toBe(true);
    expect(withinShareOf(315_000, 300_000, 0.05)).toBe(true);
    expect(withinShareOf(284_999, 300_000, 0.05)).toBe(false);
    expect(withinShareOf(293_400, 300_000, 0.05)).toBe(true);
  });
});

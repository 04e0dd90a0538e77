/**
 * W7's arithmetic, from the local LLM server's request records: the tokens per minute the
 * answered calls achieved over a span, the most tokens any window of the limit's length
 * held (the window the server and the limiter count in: a call at `t` is in the window
 * ending at `e` when e − w < t ≤ e), and the credits the answered calls must have cost at
 * the model's price, each call rounded up to the milli-credit on its own (the charge rule,
 * src/domain/llm-pricing.ts). Kept apart from the run so the unit tests check the figures
 * the benchmark judges itself by.
 */
import { type LlmPrice, llmCostMilli } from "@/domain/llm-pricing";

/** One answered call as the server recorded it: its arrival (epoch ms) and its usage. */
export interface W7Call {
  at: number;
  inputTokens: number;
  outputTokens: number;
}

const tokensOf = (c: W7Call) => c.inputTokens + c.outputTokens;
const byArrival = (calls: readonly W7Call[]) => [...calls].sort((a, b) => a.at - b.at);

/**
 * Tokens per minute over the calls' span, first arrival to last: the tokens of every call
 * but the first (the first marks the span's start, as n calls span n − 1 gaps). 0 under
 * two calls, or when they all arrived in the same millisecond (no span to divide by).
 */
export function tokensPerMinute(calls: readonly W7Call[]): number {
  if (calls.length < 2) return 0;
  const sorted = byArrival(calls);
  const span = (sorted.at(-1)?.at ?? 0) - (sorted[0]?.at ?? 0);
  if (span <= 0) return 0;
  const tokens = sorted.slice(1).reduce((sum, c) => sum + tokensOf(c), 0);
  return (tokens * 60_000) / span;
}

/**
 * The same without the calls of the first and last `trimMs` of the span (the pace
 * settling in and the last calls draining, which no limit causes).
 */
export function steadyTokensPerMinute(calls: readonly W7Call[], trimMs: number): number {
  if (calls.length === 0) return 0;
  const sorted = byArrival(calls);
  const first = sorted[0]?.at ?? 0;
  const last = sorted.at(-1)?.at ?? 0;
  return tokensPerMinute(sorted.filter((c) => c.at >= first + trimMs && c.at <= last - trimMs));
}

/** The most tokens any window of `windowMs` held: (e − windowMs, e] over every end e. */
export function maxTokensInAnyWindow(calls: readonly W7Call[], windowMs: number): number {
  const sorted = byArrival(calls);
  let peak = 0;
  let sum = 0;
  let start = 0;
  for (const c of sorted) {
    sum += tokensOf(c);
    while ((sorted[start]?.at ?? 0) <= c.at - windowMs) sum -= tokensOf(sorted[start++] as W7Call);
    peak = Math.max(peak, sum);
  }
  return peak;
}

/** What the calls must have been charged, in milli-credits: each at `price`, rounded up on its own. */
export function expectedMilli(calls: readonly W7Call[], price: LlmPrice): number {
  return calls.reduce((sum, c) => sum + llmCostMilli(price, c), 0);
}

/** `measured` within `share` (0.05: 5 %) of `limit`, on either side. */
export function withinShareOf(measured: number, limit: number, share: number): boolean {
  return Math.abs(measured - limit) <= share * limit;
}

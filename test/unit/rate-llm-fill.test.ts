/**
 * Why reserve and settle can reach a token limit: with reservations ten times what the
 * calls use (W7's shape: ~100 tokens a call, reserved with maxTokens 1,024), the settled
 * usage in the busiest minute is within 5 % of the tokens per minute and never above
 * them, and so is the pace over the whole run (no minute's tokens spent in a burst). With
 * a model latency of a second, the calls in flight hold their whole reservations in the
 * window (as a provider counting `max_tokens` in flight does): the pace is within 5 % of
 * what the window leaves the settled calls, because in a sixth of the window the calls in
 * flight count at what the key's calls used (the part cap, recent-use.ts), not in full.
 * A simulation on the weighted log (the in-process limiter, a simulated clock): a hundred
 * callers (two processes' fifty) each take, wait for their slot, and settle `latencyMs`
 * later, or ask again when refused.
 */
import { describe, expect, it } from "vitest";
import { LLM_POLL_MS, LLM_REACH_MS } from "@/limits/rate/llm";
import { MemoryLimiter } from "@/limits/rate/memory";
import type { Slot } from "@/limits/rate/port";
import { RecentUse } from "@/limits/rate/recent-use";
import { maxWeightInAnyWindow } from "../helpers/pacers";

const KEY = "ws:llm:m";
const LIMIT = { limit: 5_000, windowMs: 60_000, weightLimit: 300_000 };
const RESERVE = 1_124;
const USED = 100;
const CALLS = 5_000;

/**
 * Tokens per minute the settled calls can reach when each holds `reserve` for `latencyMs`
 * before it settles to `used`: in a full window the settled calls (r·60 s·used) and those
 * in flight (r·latency·reserve) share the limit.
 */
function settledCeiling(limit: number, used: number, reserve: number, latencyMs: number) {
  const settled = 60 * used;
  return (limit * settled) / (settled + (latencyMs / 1_000) * reserve);
}

async function simulate(latencyMs: number, partCap: boolean) {
  let clock = 1_000_000;
  const limiter = new MemoryLimiter(() => clock);
  const recent = new RecentUse();
  let left = CALLS;
  let refusals = 0;
  const done: { at: number; weight: number }[] = [];
  // Two processes of fifty callers, each with its line: only its front asks the limiter
  // (line.ts); a front given a slot leaves, and the next asks at once.
  const processes = [0, 1].map((p) => ({ waiting: 50, asksAt: clock + p }));
  const answers: { at: number; process: number; slot: Slot }[] = [];
  while (done.length < CALLS) {
    const front = processes
      .filter((p) => p.waiting > 0 && left > 0)
      .reduce<(typeof processes)[number] | undefined>(
        (a, b) => (a && a.asksAt <= b.asksAt ? a : b),
        undefined,
      );
    const answer = answers.reduce<(typeof answers)[number] | undefined>(
      (a, b) => (a && a.at <= b.at ? a : b),
      undefined,
    );
    if (answer && (!front || answer.at <= front.asksAt)) {
      // The call went at its slot and answers `latencyMs` later with its real usage.
      clock = answer.at;
      answers.splice(answers.indexOf(answer), 1);
      recent.add(KEY, USED);
      await limiter.settle(KEY, LIMIT, answer.slot, USED);
      done.push({ at: answer.slot.at, weight: USED });
      const p = processes[answer.process] as (typeof processes)[number];
      if (p.waiting++ === 0) p.asksAt = clock;
      continue;
    }
    if (!front) break;
    clock = front.asksAt;
    const cap = partCap ? recent.cap(KEY) : undefined;
    // As paceLlmCall asks: a slot at most LLM_REACH_MS ahead, again at most LLM_POLL_MS later.
    const take = await limiter.take(KEY, LIMIT, {
      weight: RESERVE,
      maxWaitMs: LLM_REACH_MS,
      ...(cap === undefined ? {} : { partCap: cap }),
    });
    if (!take.ok) {
      refusals++;
      front.asksAt = clock + Math.min(take.retryAfterMs, LLM_POLL_MS) + (refusals % 3);
      continue;
    }
    left--;
    front.waiting--;
    answers.push({ at: take.at + latencyMs, process: processes.indexOf(front), slot: take });
  }
  const ats = done.map((d) => d.at);
  return {
    done: done.length,
    busiest: maxWeightInAnyWindow(done, 60_000),
    // The run's own pace: its tokens over the span of their slots.
    perMinute: (done.length * USED * 60_000) / (Math.max(...ats) - Math.min(...ats)),
    refusals,
  };
}

describe("reserve and settle on a weighted log", () => {
  it("fills the tokens per minute with settled usage to within 5 %, never above, when calls reserve ten times what they use", async () => {
    const run = await simulate(5, true);
    expect(run.done).toBe(CALLS);
    expect(run.busiest).toBeLessThanOrEqual(300_000);
    expect(run.busiest).toBeGreaterThanOrEqual(300_000 * 0.95);
    expect(run.perMinute).toBeLessThanOrEqual(300_000);
    expect(run.perMinute).toBeGreaterThanOrEqual(300_000 * 0.95);
    // Each front asks again when the nearest reserved slot has come: a few reads a call.
    expect(run.refusals).toBeLessThan(CALLS * 5);
  });

  it("with a second of model latency, fills what the calls in flight leave of the window to within 5 %, never above", async () => {
    const ceiling = settledCeiling(300_000, USED, RESERVE, 1_000);
    const run = await simulate(1_000, true);
    expect(run.done).toBe(CALLS);
    expect(run.busiest).toBeLessThanOrEqual(300_000);
    // (Above the ceiling is no fault: the first minute starts with no settled calls in it.)
    expect(run.perMinute).toBeLessThanOrEqual(300_000);
    expect(run.perMinute).toBeGreaterThanOrEqual(ceiling * 0.95);
    // Counted in full in every sixth, the calls in flight held the pace to about half.
    const uncapped = await simulate(1_000, false);
    expect(uncapped.perMinute).toBeLessThan(ceiling * 0.7);
  });
});

describe("the ceiling the calls in flight leave (settledCeiling)", () => {
  it("is the whole limit without latency and shrinks as the reservations in flight grow", () => {
    expect(settledCeiling(300_000, 100, 1_124, 0)).toBe(300_000);
    // r·6,000 + r·1,124 = 300,000 → r ≈ 42.11 calls/s, 252,667 tokens/min settled.
    expect(settledCeiling(300_000, 100, 1_124, 1_000)).toBeCloseTo(252_667, 0);
    expect(settledCeiling(60_000, 100, 100, 60_000)).toBe(30_000);
  });
});

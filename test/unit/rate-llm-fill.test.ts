/**
 * Why reserve and settle can reach a token limit: with reservations ten times what the
 * calls use (W7's shape: ~100 tokens a call, reserved with maxTokens 1,024), the settled
 * usage in the busiest minute is within 5 % of the tokens per minute and never above
 * them, and so is the pace over the whole run (no minute's tokens spent in a burst). A simulation on the weighted log (the in-process limiter, a simulated clock): a
 * hundred callers (two processes' fifty) each take, wait for their slot, and settle 5 ms
 * later, or ask again when refused.
 */
import { describe, expect, it } from "vitest";
import { MemoryLimiter } from "@/limits/rate/memory";
import type { Slot } from "@/limits/rate/port";
import { maxWeightInAnyWindow } from "../helpers/pacers";

describe("reserve and settle on a weighted log", () => {
  it("fills the tokens per minute with settled usage to within 5 %, never above, when calls reserve ten times what they use", async () => {
    let clock = 1_000_000;
    const limiter = new MemoryLimiter(() => clock);
    const key = "ws:llm:m";
    const limit = { limit: 5_000, windowMs: 60_000, weightLimit: 300_000 };
    const reserve = 1_124;
    const used = 100;
    let left = 5_000;
    let refusals = 0;
    const done: { at: number; weight: number }[] = [];
    // Two processes of fifty callers, each with its line: only its front asks the limiter
    // (line.ts); a front given a slot leaves, and the next asks at once.
    const processes = [0, 1].map((p) => ({ waiting: 50, asksAt: clock + p }));
    const answers: { at: number; process: number; slot: Slot }[] = [];
    while (done.length < 5_000) {
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
        // The call went at its slot and answers 5 ms later with its real usage.
        clock = answer.at;
        answers.splice(answers.indexOf(answer), 1);
        await limiter.settle(key, limit, answer.slot, used);
        done.push({ at: answer.slot.at, weight: used });
        const p = processes[answer.process] as (typeof processes)[number];
        if (p.waiting++ === 0) p.asksAt = clock;
        continue;
      }
      if (!front) break;
      clock = front.asksAt;
      const take = await limiter.take(key, limit, { weight: reserve });
      if (!take.ok) {
        refusals++;
        front.asksAt = clock + take.retryAfterMs + (refusals % 3);
        continue;
      }
      left--;
      front.waiting--;
      answers.push({ at: take.at + 5, process: processes.indexOf(front), slot: take });
    }
    expect(done).toHaveLength(5_000);
    const busiest = maxWeightInAnyWindow(done, 60_000);
    expect(busiest).toBeLessThanOrEqual(300_000);
    expect(busiest).toBeGreaterThanOrEqual(300_000 * 0.95);
    // The run's own pace: its 500,000 tokens over the span of their slots.
    const ats = done.map((d) => d.at);
    const perMinute = (5_000 * used * 60_000) / (Math.max(...ats) - Math.min(...ats));
    expect(perMinute).toBeLessThanOrEqual(300_000);
    expect(perMinute).toBeGreaterThanOrEqual(300_000 * 0.95);
    // Each front asks again when the nearest reserved slot has come: a few reads a call.
    expect(refusals).toBeLessThan(5_000 * 5);
  });
});

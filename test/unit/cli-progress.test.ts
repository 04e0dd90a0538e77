import { describe, expect, it } from "vitest";
import {
  barLine,
  etaSeconds,
  formatDuration,
  plainLine,
  progressOf,
  RateMeter,
  runEnd,
} from "@/cli/progress";

const counts = (c: Partial<Record<string, number>> = {}) => ({
  queued: 0,
  running: 0,
  paused: 0,
  completed: 0,
  error: 0,
  cancelled: 0,
  ...c,
});

const run = (over: Record<string, unknown> = {}) => ({
  id: "d_1",
  status: "active" as const,
  stamped: 100,
  stamping: false,
  counts: counts(),
  haltReason: null,
  maxCredits: null,
  creditsUsed: 0,
  ...over,
});

describe("progress arithmetic", () => {
  it("done counts every cell that reached an end: completed, error and cancelled", () => {
    const p = progressOf(
      run({ counts: counts({ completed: 50, error: 3, cancelled: 2, running: 5 }) }),
    );
    expect(p).toMatchObject({ done: 55, total: 100, errors: 3, cancelled: 2 });
  });

  it("total is what the run stamped, or more when its counts hold more", () => {
    expect(
      progressOf(run({ stamped: 10, counts: counts({ completed: 8, queued: 7 }) })).total,
    ).toBe(15);
    expect(progressOf(run({ stamped: 0, stamping: true })).total).toBe(0);
  });

  it("the rate is cells per second over the window, from the oldest sample in it", () => {
    const m = new RateMeter(10_000);
    m.add(0, 0);
    expect(m.rate()).toBeNull();
    m.add(500, 10);
    expect(m.rate()).toBeNull(); // under a second: too early to say
    m.add(2_000, 40);
    expect(m.rate()).toBe(20);
    // Samples older than the window drop out: 60 → 260 cells over 13 s → 20 s later.
    m.add(11_000, 60);
    m.add(13_000, 100);
    m.add(21_000, 260);
    expect(m.rate()).toBeCloseTo((260 - 60) / 10, 5);
  });

  it("a stalled run has rate 0 and no ETA; a done one has ETA 0", () => {
    const m = new RateMeter(10_000);
    m.add(0, 40);
    m.add(5_000, 40);
    expect(m.rate()).toBe(0);
    const p = progressOf(run({ counts: counts({ completed: 40 }) }));
    expect(etaSeconds(p, m.rate())).toBeNull();
    expect(etaSeconds(p, null)).toBeNull();
    expect(etaSeconds(progressOf(run({ counts: counts({ completed: 100 }) })), null)).toBe(0);
  });

  it("the ETA is what is left at the rate, rounded up", () => {
    const p = progressOf(run({ counts: counts({ completed: 25 }) }));
    expect(etaSeconds(p, 10)).toBe(8);
    expect(formatDuration(8)).toBe("8s");
    expect(formatDuration(125)).toBe("2m 05s");
    expect(formatDuration(3_725)).toBe("1h 02m");
  });
});

describe("progress wording", () => {
  it("the plain line names the run and says done/total, rate, errors and ETA", () => {
    const p = progressOf(run({ counts: counts({ completed: 40, error: 1, running: 5 }) }));
    expect(plainLine("d_1", p, 7.5)).toBe(
      "run d_1: 41/100 done (41%), 7.5 cells/s, 1 error, ETA 8s",
    );
    expect(plainLine("d_1", p, 120.4)).toContain(", 120 cells/s,");
    expect(plainLine("d_1", progressOf(run({ stamping: true })), null)).toBe(
      "run d_1: 0/100+ done (0%), ? cells/s, 0 errors, ETA ?",
    );
  });

  it("the bar fits the terminal's width and fills in proportion", () => {
    const p = progressOf(run({ counts: counts({ completed: 50 }) }));
    for (const columns of [30, 60, 79, 200]) {
      const line = barLine(p, 100, columns);
      expect(line.length).toBeLessThanOrEqual(columns);
      expect(line).toContain("50/100 done (50%)");
    }
    const wide = barLine(p, 100, 200);
    const bar = /^\[(#*)(-*)\]/.exec(wide);
    expect(bar?.[1]?.length).toBe(bar?.[2]?.length);
  });
});

describe("how following a run ends", () => {
  const rerun = "cellflow run T";

  it("completed exits 0, and with errors still 0 but says how to re-run them", () => {
    const clean = runEnd(
      run({ status: "completed", counts: counts({ completed: 100 }) }),
      4_000,
      rerun,
    );
    expect(clean).toEqual({ exit: 0, message: "run d_1 completed: 100/100 done, 0 errors in 4s" });
    const errs = runEnd(
      run({ status: "completed", counts: counts({ completed: 97, error: 3 }) }),
      4_000,
      rerun,
    );
    expect(errs.exit).toBe(0);
    expect(errs.message).toContain("completed with errors: 100/100 done, 3 errors");
    expect(errs.hint).toBe("re-run the failed cells with: cellflow run T --mode failed");
  });

  it("halted exits 1 with its reason; a stopped run exits 1 too", () => {
    const cap = runEnd(
      run({ status: "halted", haltReason: "run_credit_cap", maxCredits: 5, creditsUsed: 5 }),
      1_000,
      rerun,
    );
    expect(cap.exit).toBe(1);
    expect(cap.message).toContain("its credit cap was reached (5 of 5 credits)");
    const month = runEnd(run({ status: "halted", haltReason: "monthly_credits" }), 1_000, rerun);
    expect(month.message).toContain("monthly credits ran out");
    const stopped = runEnd(
      run({ status: "cancelled", counts: counts({ completed: 10, cancelled: 90 }) }),
      1_000,
      rerun,
    );
    expect(stopped).toMatchObject({ exit: 1 });
    expect(stopped.message).toContain("was stopped: 90 cells cancelled");
  });
});

/**
 * The System page's figures computed in memory: a histogram's quantiles read as
 * Prometheus' `histogram_quantile` reads them, and a run's rate from its `done` counter
 * over the recent window (the average since it started before there is one).
 */
import { describe, expect, it } from "vitest";
import { histogramQuantile } from "@/domain/histogram-quantile";
import { RunRates } from "@/services/run-rates";

const INF = Number.POSITIVE_INFINITY;

describe("histogramQuantile", () => {
  it("no observation: null", () => {
    expect(histogramQuantile(0.5, [])).toBeNull();
    expect(
      histogramQuantile(0.5, [
        { le: 1, count: 0 },
        { le: INF, count: 0 },
      ]),
    ).toBeNull();
  });

  it("interpolates inside the bucket the rank falls in (from 0 in the first)", () => {
    const buckets = [
      { le: 1, count: 50 },
      { le: 2, count: 100 },
      { le: INF, count: 100 },
    ];
    expect(histogramQuantile(0.25, buckets)).toBeCloseTo(0.5);
    expect(histogramQuantile(0.5, buckets)).toBeCloseTo(1);
    expect(histogramQuantile(0.75, buckets)).toBeCloseTo(1.5);
    expect(histogramQuantile(0.99, buckets)).toBeCloseTo(1.98);
  });

  it("a rank in +Inf answers the highest finite bound; bucket order does not matter", () => {
    const buckets = [
      { le: INF, count: 10 },
      { le: 5, count: 2 },
      { le: 1, count: 1 },
    ];
    expect(histogramQuantile(0.99, buckets)).toBe(5);
    expect(histogramQuantile(0.1, buckets)).toBeCloseTo(1);
  });
});

describe("RunRates", () => {
  it("first look: the average since the run started", () => {
    const rates = new RunRates();
    expect(rates.rate("r", 20, 10_000, 0)).toBeCloseTo(2);
    expect(rates.rate("s", 0, 10_000, 10_000)).toBe(0);
  });

  it("then what done grew by over the readings of the last 30 s", () => {
    const rates = new RunRates();
    rates.rate("r", 100, 100_000, 0);
    // 10 cells in 2 s: 5/s, not the 1.1/s average since the start.
    expect(rates.rate("r", 110, 102_000, 0)).toBeCloseTo(5);
    expect(rates.rate("r", 130, 104_000, 0)).toBeCloseTo(7.5);
    // 40 s later the old readings are out of the window: the start average again until a
    // second reading a second apart.
    expect(rates.rate("r", 200, 144_000, 0)).toBeCloseTo(200 / 144);
    expect(rates.rate("r", 210, 146_000, 0)).toBeCloseTo(5);
  });

  it("a done that went back (cells re-stamped by another run) reads as no progress", () => {
    const rates = new RunRates();
    rates.rate("r", 50, 0, 0);
    expect(rates.rate("r", 40, 2_000, 0)).toBe(0);
  });

  it("forgets runs nobody read for five minutes", () => {
    const rates = new RunRates();
    rates.rate("r", 100, 0, -100_000);
    rates.forget(6 * 60_000);
    // Forgotten: the next reading is a first look again.
    expect(rates.rate("r", 100, 6 * 60_000, -100_000)).toBeCloseTo(100 / 460);
  });
});

/** The benchmark's per-cell arithmetic: a run's figures are per cell of the whole run. */
import { describe, expect, it } from "vitest";
import { median, perCell, spread } from "../../bench/figures";

describe("bench per-cell figures", () => {
  it("divides by every cell of the run, not the ones the request stamped itself", () => {
    // 10,000 rows × 2 groups, 20,000 cells in 50 s with 53,200 queries and 26,000 commits.
    expect(perCell({ cells: 20_000, seconds: 50, queries: 53_200, commits: 26_000 })).toEqual({
      cellsPerSec: 400,
      roundTripsPerCell: 2.66,
      commitsPerCell: 1.3,
    });
  });

  it("refuses a run with no cells or no time rather than print infinities", () => {
    expect(() => perCell({ cells: 0, seconds: 1, queries: 0, commits: 0 })).toThrow();
    expect(() => perCell({ cells: 1, seconds: 0, queries: 0, commits: 0 })).toThrow();
  });
});

describe("bench medians and spreads", () => {
  it("takes the middle of an odd count and the mean of the middle two of an even one", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 10])).toBe(3.5);
  });

  it("reports the median with the lowest and highest run, whatever their order", () => {
    expect(spread([130.12345, 128, 133])).toEqual({ median: 130.123, min: 128, max: 133 });
  });

  it("refuses no runs rather than print Infinity as null", () => {
    expect(() => spread([])).toThrow();
  });
});

/** The W1 size sweep's arithmetic: which sizes, the figures per size, flatness across them. */
import { describe, expect, it } from "vitest";
import { flatness, headline, type PairedRun, sizePoint, w1Cells, w1Sizes } from "../../bench/sweep";

const run = (cellsPerSec: number, peerJobsPerSec: number): PairedRun => ({
  cellsPerSec,
  peerJobsPerSec,
  roundTripsPerCell: 3,
  commitsPerCell: 2,
});

describe("W1 sweep sizes", () => {
  it("sweeps 3k, 10k and 30k by default: 100k only when asked", () => {
    expect(w1Sizes(undefined, undefined)).toEqual([3_000, 10_000, 30_000]);
    expect(w1Sizes("3000,10000,30000,100000", undefined)).toEqual([3_000, 10_000, 30_000, 100_000]);
  });

  it("keeps BENCH_ROWS as one size, and BENCH_W1_SIZES wins over it", () => {
    expect(w1Sizes(undefined, "3000")).toEqual([3_000]);
    expect(w1Sizes("", "3000")).toEqual([3_000]);
    expect(w1Sizes("200,400", "3000")).toEqual([200, 400]);
  });

  it("sorts and drops repeats, so the sweep's ends are its smallest and largest", () => {
    expect(w1Sizes("30000, 3000,10000,3000,", undefined)).toEqual([3_000, 10_000, 30_000]);
  });

  it("refuses what is not a whole positive row count", () => {
    for (const bad of ["3k", "0", "-5", "1.5", ","]) {
      expect(() => w1Sizes(bad, undefined)).toThrow();
    }
  });
});

describe("W1 figures per size", () => {
  it("runs the peer at the engine's cell count: two cells a row", () => {
    expect(w1Cells(10_000)).toBe(20_000);
    expect(sizePoint(3_000, [run(300, 1_000)]).cells).toBe(6_000);
  });

  it("divides engine cells/s by peer jobs/s, not the other way round", () => {
    const p = sizePoint(10_000, [run(130, 1_300)]);
    expect(p.ratio).toEqual({ median: 0.1, min: 0.1, max: 0.1 });
    expect(p.cellsPerSec.median).toBe(130);
    expect(p.peerJobsPerSec.median).toBe(1_300);
    expect(p.repeats).toBe(1);
  });

  it("takes the ratio per pair before the median, not as a ratio of medians", () => {
    // Pairs 0.1, 0.2, 0.1; the medians' ratio would be 200 / 1,000 = 0.2.
    const p = sizePoint(10_000, [run(100, 1_000), run(200, 1_000), run(300, 3_000)]);
    expect(p.ratio).toEqual({ median: 0.1, min: 0.1, max: 0.2 });
    expect(p.cellsPerSec).toEqual({ median: 200, min: 100, max: 300 });
    expect(p.roundTripsPerCell.median).toBe(3);
    expect(p.commitsPerCell.median).toBe(2);
  });

  it("refuses a size with no runs or a peer that did nothing", () => {
    expect(() => sizePoint(3_000, [])).toThrow();
    expect(() => sizePoint(3_000, [run(300, 0)])).toThrow();
  });
});

describe("W1 flatness", () => {
  // Listed out of order: the ends must come from the row counts, not the list.
  const points = [
    sizePoint(30_000, [run(240, 1_000), run(250, 1_000), run(260, 1_000)]),
    sizePoint(3_000, [run(100, 1_000), run(300, 1_000), run(900, 1_000)]),
    sizePoint(10_000, [run(280, 1_000)]),
  ];

  it("is the largest size's median cells/s over the smallest's", () => {
    // 250 / 300; the list's ends would give 280 / 250, the inverse 1.2, the minima 2.4.
    expect(flatness(points)).toEqual({ fromRows: 3_000, toRows: 30_000, share: 0.833 });
  });

  it("says nothing with one size", () => {
    expect(flatness([sizePoint(3_000, [run(300, 1_000)])])).toBeNull();
    expect(flatness([])).toBeNull();
  });

  it("reads the 10,000-row point as the headline, else the smallest size", () => {
    expect(headline(points).rows).toBe(10_000);
    const swept = [sizePoint(400, [run(40, 500)]), sizePoint(200, [run(50, 500)])];
    expect(headline(swept).rows).toBe(200);
  });
});

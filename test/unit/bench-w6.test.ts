import { describe, expect, it } from "vitest";
import {
  extrapolateMs,
  fullRunOf,
  growthPer,
  highWaterMiB,
  perSecond,
  sizeGrowthPer,
  vmRssBytes,
} from "../../bench/w6-figures";

describe("W6's rates", () => {
  it("100,000 cells in 110.6 s are 904 cells/s; no time is 0, not infinity", () => {
    expect(Math.round(perSecond(100_000, 110_600))).toBe(904);
    expect(perSecond(1_000_000, 1_000)).toBe(1_000_000);
    expect(perSecond(5, 0)).toBe(0);
  });

  it("extrapolates linearly: 200,000 cells in 220 s are 1,100 s at a million", () => {
    expect(extrapolateMs(200_000, 220_000, 1_000_000)).toBe(1_100_000);
    expect(extrapolateMs(0, 5_000, 1_000_000)).toBe(0);
  });
});

describe("W6's per-row and per-cell figures", () => {
  it("events per cell: two per cell over a million cells, and none over no cells", () => {
    expect(growthPer(17, 2_000_017, 1_000_000)).toBe(2);
    expect(growthPer(0, 10, 0)).toBe(0);
  });

  it("bytes per row per relation and in total, a relation absent before counting from 0", () => {
    const before = { cells: 8192, events: 16_384 };
    const after = { cells: 8192 + 250_000_000, events: 16_384 + 330_000_000, rows: 150_000_000 };
    expect(sizeGrowthPer(before, after, 1_000_000)).toEqual({
      cells: 250,
      events: 330,
      rows: 150,
      total: 730,
    });
  });

  it("rounds per-row sizes to whole bytes and gives 0 for no rows", () => {
    expect(sizeGrowthPer({ cells: 0 }, { cells: 1_000 }, 3)).toEqual({ cells: 333, total: 333 });
    expect(sizeGrowthPer({ cells: 0 }, { cells: 1_000 }, 0)).toEqual({ cells: 0, total: 0 });
  });
});

describe("W6's RSS high-water marks", () => {
  it("keeps the highest sample of each process, in MiB to one decimal", () => {
    const mib = 2 ** 20;
    expect(
      highWaterMiB([
        { process: "bench", bytes: 200 * mib },
        { process: "worker", bytes: 150 * mib },
        { process: "bench", bytes: 1_536.25 * mib },
        { process: "bench", bytes: 300 * mib },
        { process: "worker", bytes: 149 * mib },
      ]),
    ).toEqual({ bench: 1536.3, worker: 150 });
    expect(highWaterMiB([])).toEqual({});
  });

  it("reads VmRSS out of /proc/<pid>/status, null when the line is absent", () => {
    const status = "Name:\tnode\nVmPeak:\t  999 kB\nVmRSS:\t  204800 kB\nThreads:\t11\n";
    expect(vmRssBytes(status)).toBe(204_800 * 1024);
    expect(vmRssBytes("Name:\tnode\nState:\tZ (zombie)\n")).toBeNull();
  });
});

describe("W6's full run on the W1 chart", () => {
  it("takes the run step's cells and cells/s", () => {
    expect(
      fullRunOf({ build: { ms: 1 }, run: { cells: 1_000_000, cellsPerSec: 1_141, ms: 876_000 } }),
    ).toEqual({
      rows: 1_000_000,
      cellsPerSec: 1_141,
    });
  });

  it("has no point when W6 did not run, or its run broke (a cut-off step has no rate)", () => {
    expect(fullRunOf(undefined)).toBeNull();
    expect(fullRunOf({ run: { afterMs: 900_000, error: "canceling statement" } })).toBeNull();
    expect(fullRunOf({ run: { cells: 0, cellsPerSec: 0 } })).toBeNull();
  });
});

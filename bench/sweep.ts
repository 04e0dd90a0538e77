/**
 * The W1 size sweep's arithmetic, apart from the runs so it can be tested without a
 * database: per size, the engine's runs and the peer runs beside them; across sizes, how
 * much of its throughput the engine keeps as the table grows.
 */
import { type Spread, spread } from "./figures";

/** W1 chains two groups per row: the cells a size makes, and so the peer's job count. */
export const W1_CELLS_PER_ROW = 2;
export const w1Cells = (rows: number): number => rows * W1_CELLS_PER_ROW;

/** 100,000 rows takes long enough on a 2-core machine that it is asked for, not default. */
export const DEFAULT_W1_SIZES = [3_000, 10_000, 30_000];

/** The size the top-level W1 fields describe when the sweep has it: the pre-sweep default. */
export const HEADLINE_ROWS = 10_000;

/**
 * The sizes to sweep, ascending and without repeats. `BENCH_W1_SIZES` wins; `BENCH_ROWS`
 * alone still means one size, so the commands written before the sweep keep working.
 */
export function w1Sizes(sizes: string | undefined, rows: string | undefined): number[] {
  const text = sizes?.trim() ? sizes : rows?.trim() ? rows : undefined;
  if (text === undefined) return [...DEFAULT_W1_SIZES];
  const parsed = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => {
      const n = Number(s);
      if (!Number.isInteger(n) || n <= 0) throw new Error(`not a row count: "${s}" in "${text}"`);
      return n;
    });
  if (parsed.length === 0) throw new Error(`no row counts in "${text}"`);
  return [...new Set(parsed)].sort((a, b) => a - b);
}

/** One engine run at a size and the peer run just before it, at the same job count. */
export interface PairedRun {
  cellsPerSec: number;
  peerJobsPerSec: number;
  roundTripsPerCell: number;
  commitsPerCell: number;
}

export interface SizePoint {
  rows: number;
  /** The engine's cells at this size, and the peer's jobs. */
  cells: number;
  repeats: number;
  cellsPerSec: Spread;
  peerJobsPerSec: Spread;
  /** Engine cells/s over peer jobs/s: 1 would be the engine as fast as the bare queue. */
  ratio: Spread;
  roundTripsPerCell: Spread;
  commitsPerCell: Spread;
}

export function sizePoint(rows: number, runs: readonly PairedRun[]): SizePoint {
  if (runs.length === 0) throw new Error(`no W1 runs at ${rows} rows`);
  for (const r of runs) {
    if (!(r.peerJobsPerSec > 0)) throw new Error(`peer rate ${r.peerJobsPerSec} at ${rows} rows`);
  }
  return {
    rows,
    cells: w1Cells(rows),
    repeats: runs.length,
    cellsPerSec: spread(runs.map((r) => r.cellsPerSec)),
    peerJobsPerSec: spread(runs.map((r) => r.peerJobsPerSec)),
    // Per pair, then the spread: a pair ran back to back under the same load on the
    // machine, which a ratio of two medians taken from different runs would not honour.
    ratio: spread(runs.map((r) => r.cellsPerSec / r.peerJobsPerSec)),
    roundTripsPerCell: spread(runs.map((r) => r.roundTripsPerCell)),
    commitsPerCell: spread(runs.map((r) => r.commitsPerCell)),
  };
}

/** Median cells/s at the largest size as a share of the smallest's (issue 15: ≥ 0.85). */
export interface Flatness {
  fromRows: number;
  toRows: number;
  share: number;
}

/** Null with fewer than two sizes: one size says nothing about how throughput scales. */
export function flatness(points: readonly SizePoint[]): Flatness | null {
  const byRows = [...points].sort((a, b) => a.rows - b.rows);
  const small = byRows[0];
  const large = byRows.at(-1);
  if (!small || !large || small.rows === large.rows) return null;
  if (!(small.cellsPerSec.median > 0)) {
    throw new Error(`no throughput at ${small.rows} rows to take a share of`);
  }
  return {
    fromRows: small.rows,
    toRows: large.rows,
    share: +(large.cellsPerSec.median / small.cellsPerSec.median).toFixed(3),
  };
}

/** The point the top-level W1 fields describe, so readers from before the sweep still work. */
export function headline(points: readonly SizePoint[]): SizePoint {
  const smallest = [...points].sort((a, b) => a.rows - b.rows)[0];
  const point = points.find((p) => p.rows === HEADLINE_ROWS) ?? smallest;
  if (!point) throw new Error("no W1 sizes");
  return point;
}

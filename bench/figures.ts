/**
 * The per-cell figures of a run, from what the benchmark counted around it. `cells` is
 * every cell of the run: a large run stamps its first rows in the request and the rest in
 * the background, so the request's own count is not the run's.
 */
export interface RunCounts {
  cells: number;
  seconds: number;
  /** The engine's queries (the benchmark's own polls taken out). */
  queries: number;
  /** The engine's commits (likewise). */
  commits: number;
}

export interface PerCell {
  cellsPerSec: number;
  roundTripsPerCell: number;
  commitsPerCell: number;
}

export function perCell(c: RunCounts): PerCell {
  if (c.cells <= 0 || c.seconds <= 0) throw new Error(`no cells or no time: ${JSON.stringify(c)}`);
  return {
    cellsPerSec: c.cells / c.seconds,
    roundTripsPerCell: c.queries / c.cells,
    commitsPerCell: c.commits / c.cells,
  };
}

/** A figure over repeated runs: read the median, and the min–max for how much it moved. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

export function spread(xs: readonly number[]): Spread {
  // Math.min() of nothing is Infinity, which JSON prints as null: refuse instead.
  if (xs.length === 0) throw new Error("no runs to take a spread of");
  return {
    median: +median(xs).toFixed(3),
    min: +Math.min(...xs).toFixed(3),
    max: +Math.max(...xs).toFixed(3),
  };
}

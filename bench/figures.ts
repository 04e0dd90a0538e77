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

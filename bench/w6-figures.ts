/**
 * W6's arithmetic: rates, per-row and per-cell figures, the RSS high-water marks from the
 * once-a-second samples, and the linear extrapolation of a smaller run to the table's
 * size, and its full run as a point of the W1 chart. Kept apart from the run so the unit
 * tests check the figures the benchmark reports.
 */

import { z } from "zod";
import type { ChartRun } from "./chart";

/** Things per second over `ms`; 0 when no time passed (nothing to divide by). */
export function perSecond(count: number, ms: number): number {
  return ms > 0 ? (count * 1000) / ms : 0;
}

/** What `after` − `before` is per `units` (bytes per row, events per cell); 0 for no units. */
export function growthPer(before: number, after: number, units: number): number {
  return units > 0 ? (after - before) / units : 0;
}

/** The sizes of some relations, in bytes, by name. */
export type Sizes = Record<string, number>;

/** Bytes each relation grew per unit (per row), and in total, from two readings of the same relations. */
export function sizeGrowthPer(before: Sizes, after: Sizes, units: number): Sizes {
  const out: Sizes = {};
  let total = 0;
  for (const [name, bytes] of Object.entries(after)) {
    const grew = bytes - (before[name] ?? 0);
    total += grew;
    out[name] = Math.round(growthPer(0, grew, units));
  }
  out.total = Math.round(growthPer(0, total, units));
  return out;
}

/**
 * The time a run of `done` things took in `ms`, scaled linearly to `target` things. A
 * guess that assumes the rate holds, which a report must say.
 */
export function extrapolateMs(done: number, ms: number, target: number): number {
  return done > 0 ? (ms * target) / done : 0;
}

/** One RSS reading: which process (a label: "bench", "worker"), and its resident bytes. */
export interface RssSample {
  process: string;
  bytes: number;
}

/** The highest reading per process label, in MiB (one decimal). */
export function highWaterMiB(samples: readonly RssSample[]): Record<string, number> {
  const top = new Map<string, number>();
  for (const s of samples) top.set(s.process, Math.max(top.get(s.process) ?? 0, s.bytes));
  return Object.fromEntries([...top].map(([p, b]) => [p, Math.round((b / 2 ** 20) * 10) / 10]));
}

/** `VmRSS:  123456 kB` out of a /proc/<pid>/status text, in bytes; null when absent (gone). */
export function vmRssBytes(status: string): number | null {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return m ? Number(m[1]) * 1024 : null;
}

/**
 * W6's full run as a chart point: its rows and cells/s (null when it did not run or
 * broke). Its table has one group, so its cells are its rows.
 */
export function fullRunOf(w6Result: unknown): ChartRun | null {
  const parsed = W6FullRun.safeParse(w6Result);
  return parsed.success
    ? { rows: parsed.data.run.cells, cellsPerSec: parsed.data.run.cellsPerSec }
    : null;
}

const W6FullRun = z.object({
  run: z.object({ cells: z.number().positive(), cellsPerSec: z.number().nonnegative() }),
});

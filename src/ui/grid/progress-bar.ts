/**
 * A group header's progress bar: its cells as shares of the table's rows, in four parts
 * that add up to the whole — done (completed, any outcome), in flight (queued, running,
 * paused), failed (error) and not run (never run, or stopped before it ended).
 */
import type { GroupProgress } from "@/contracts/progress";

export interface BarShares {
  done: number;
  active: number;
  failed: number;
  idle: number;
}

/** Fractions of `rows` (0–1); all zero for a table with no rows. */
export function barShares(g: GroupProgress, rows: number): BarShares {
  if (rows <= 0) return { done: 0, active: 0, failed: 0, idle: 0 };
  const share = (n: number) => Math.min(Math.max(n / rows, 0), 1);
  return {
    done: share(g.completed),
    active: share(g.queued + g.running + g.paused),
    failed: share(g.error),
    idle: share(g.neverRun + g.cancelled),
  };
}

/** The bar's tooltip: the counts behind each part. */
export function barTitle(g: GroupProgress, rows: number): string {
  const parts = [
    `${g.completed} done`,
    `${g.running} running`,
    `${g.queued + g.paused} queued or paused`,
    `${g.error} failed`,
    `${g.cancelled} stopped`,
    `${g.neverRun} never run`,
  ];
  return `${parts.join(" · ")} (of ${rows} rows)`;
}

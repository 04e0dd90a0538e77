/**
 * How fast a run's cells end, from its `done` counter as this process read it: the System
 * page reads every run's counters every few seconds, and the rate is what `done` grew by
 * between the oldest reading of the last WINDOW_MS and now. Before there are two readings
 * a second apart (the first look at a run, or after nobody looked for a while), it is the
 * run's average since it started. Memory only: each server process keeps its own readings,
 * a few per active run, and forgets a run nobody asked about for FORGET_MS.
 */

const WINDOW_MS = 30_000;
/** Readings closer than this to the last one are not kept (many viewers, one pace). */
const MIN_GAP_MS = 500;
/** Below this span between readings, the average since the start says more. */
const MIN_SPAN_MS = 1_000;
const FORGET_MS = 5 * 60_000;

interface Reading {
  at: number;
  done: number;
}

export class RunRates {
  private readonly readings = new Map<string, Reading[]>();

  /** Records `done` at `now` (epoch ms) and answers the run's cells per second. */
  rate(runId: string, done: number, now: number, startedAt: number): number {
    const kept = (this.readings.get(runId) ?? []).filter((r) => r.at >= now - WINDOW_MS);
    const last = kept.at(-1);
    if (!last || now - last.at >= MIN_GAP_MS) kept.push({ at: now, done });
    this.readings.set(runId, kept);
    const first = kept[0];
    if (first && now - first.at >= MIN_SPAN_MS)
      return Math.max(0, done - first.done) / ((now - first.at) / 1000);
    const span = now - startedAt;
    return span > 0 ? Math.max(0, done) / (span / 1000) : 0;
  }

  /** Drops the runs read last more than FORGET_MS before `now` (ended, or nobody looks). */
  forget(now: number): void {
    for (const [id, kept] of this.readings) {
      if ((kept.at(-1)?.at ?? 0) < now - FORGET_MS) this.readings.delete(id);
    }
  }
}

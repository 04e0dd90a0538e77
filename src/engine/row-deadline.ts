/**
 * A row's deadline, armed at its cascade's first step and disarmed when the cascade ends,
 * however it ends. Invariant: a handle holds at most one armed deadline per cascade in
 * flight — nothing of a finished row outlives it.
 * Why not `AbortSignal.timeout` with an abort listener: Node keeps such a signal, its
 * listener and everything the listener closes over (the cascade, its logger, its row)
 * until the timer fires, even after the cascade has ended — a plan's whole deadline (up
 * to 6 h). At a worker's pace that held every row it ran in the last hour: the RSS grew
 * with the cells done (W6 measured 1.9 GiB at 200,000 cells).
 */
export interface RowDeadline {
  /** Idempotent: the timer is cleared and counted once. */
  disarm(): void;
}

/** The row deadlines of one engine handle (handle.ts), and how many are armed. */
export class RowDeadlines {
  private count = 0;

  /** Calls `onExpire` after `ms` unless disarmed first. The timer never holds the process open. */
  arm(ms: number, onExpire: () => void): RowDeadline {
    this.count++;
    let live = true;
    const end = (): boolean => {
      if (!live) return false;
      live = false;
      this.count--;
      return true;
    };
    const timer = setTimeout(() => {
      if (end()) onExpire();
    }, ms);
    timer.unref();
    return {
      disarm() {
        if (end()) clearTimeout(timer);
      },
    };
  }

  /** The deadlines armed now: the rows whose cascade is in flight (tests, metrics). */
  armed(): number {
    return this.count;
  }
}

/**
 * The window slides of the process's carriers as they let go of their rows, many per
 * statement. Every carrier of a run slides the run's window when it releases a row, and
 * each slide takes the run's row lock: one statement per release queued every carrier of
 * the run on that lock, one after another. Releases that wait while a statement is out go
 * together in the next one, which slides each run once for all of them.
 *
 * Invariant: a release hands its carrier at most one row per run (the slot its row
 * freed), as a slide of its own would; a run's rows are dealt out to its releases in the
 * order they asked, and every row the slide handed out reaches one of them (a scan-line
 * refill hands out a whole window: the last release takes the rest).
 */
import type { Db } from "../../db/client";
import { advanceSlots, type Release } from "../store/dispatches/advance";

const MAX_IN_FLIGHT = 2;

interface Waiting {
  dispatchIds: readonly string[];
  resolve: (advances: Release["advances"]) => void;
  reject: (err: unknown) => void;
}

export class AdvanceBatcher {
  private waiting: Waiting[] = [];
  private inFlight = 0;
  readonly stats = { statements: 0, releases: 0 };

  constructor(
    private readonly db: Db,
    private readonly maxInFlight = MAX_IN_FLIGHT,
  ) {}

  /** Slides these runs' windows for one released row; the rows handed to its carrier. */
  release(dispatchIds: readonly string[]): Promise<Release["advances"]> {
    if (dispatchIds.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.waiting.push({ dispatchIds, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async send(batch: Waiting[]): Promise<void> {
    this.stats.statements++;
    this.stats.releases += batch.length;
    const slots = new Map<string, number>();
    for (const w of batch)
      for (const id of new Set(w.dispatchIds)) slots.set(id, (slots.get(id) ?? 0) + 1);
    try {
      const advances = await advanceSlots(
        this.db,
        [...slots].map(([dispatchId, n]) => ({ dispatchId, slots: n })),
      );
      const left = new Map(advances.map((a) => [a.dispatchId, { ...a, rowIds: [...a.rowIds] }]));
      // The last release of each run takes what is left: more rows than slots come only
      // from a scan-line refill, and a row handed out must reach some carrier.
      const last = new Map<string, Waiting>();
      for (const w of batch) for (const id of w.dispatchIds) last.set(id, w);
      for (const w of batch) {
        w.resolve(
          [...new Set(w.dispatchIds)].flatMap((id) => {
            const a = left.get(id);
            if (!a) return [];
            const rowIds = last.get(id) === w ? a.rowIds.splice(0) : a.rowIds.splice(0, 1);
            return [{ dispatchId: id, rowIds, completed: a.completed }];
          }),
        );
      }
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}

const batchers = new WeakMap<Db, AdvanceBatcher>();

/** The release batcher of a connection pool (one per process per pool). */
export function advanceBatcherOf(db: Db): AdvanceBatcher {
  let b = batchers.get(db);
  if (!b) {
    b = new AdvanceBatcher(db);
    batchers.set(db, b);
  }
  return b;
}

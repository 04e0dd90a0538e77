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
import type { Db } from "@db/client";
import { advanceSlots, type Release } from "@/store/dispatches/advance";
import { Batcher, fulfilled } from "./batcher";

const MAX_IN_FLIGHT = 2;

type RunIds = readonly string[];

export class AdvanceBatcher {
  private readonly batcher: Batcher<RunIds, Release["advances"]>;

  constructor(db: Db, maxInFlight = MAX_IN_FLIGHT) {
    this.batcher = new Batcher({ maxInFlight, run: (batch) => slide(db, batch) });
  }

  /** Statements sent and releases carried, for tests. */
  get stats(): { statements: number; releases: number } {
    const { statements, requests } = this.batcher.stats;
    return { statements, releases: requests };
  }

  /** Slides these runs' windows for one released row; the rows handed to its carrier. */
  release(dispatchIds: RunIds): Promise<Release["advances"]> {
    if (dispatchIds.length === 0) return Promise.resolve([]);
    return this.batcher.submit(dispatchIds);
  }
}

async function slide(
  db: Db,
  batch: readonly RunIds[],
): Promise<PromiseSettledResult<Release["advances"]>[]> {
  const slots = new Map<string, number>();
  for (const ids of batch) for (const id of new Set(ids)) slots.set(id, (slots.get(id) ?? 0) + 1);
  const advances = await advanceSlots(
    db,
    [...slots].map(([dispatchId, n]) => ({ dispatchId, slots: n })),
  );
  const left = new Map(advances.map((a) => [a.dispatchId, { ...a, rowIds: [...a.rowIds] }]));
  // The last release of each run takes what is left: more rows than slots come only
  // from a scan-line refill, and a row handed out must reach some carrier.
  const last = new Map<string, number>();
  batch.forEach((ids, i) => {
    for (const id of ids) last.set(id, i);
  });
  return batch.map((ids, i) =>
    fulfilled(
      [...new Set(ids)].flatMap((id) => {
        const a = left.get(id);
        if (!a) return [];
        const rowIds = last.get(id) === i ? a.rowIds.splice(0) : a.rowIds.splice(0, 1);
        return [{ dispatchId: id, rowIds, completed: a.completed }];
      }),
    ),
  );
}

/**
 * The sliding window. In flight = rows of the dispatch at or before its cursor that
 * still have a queued or running cell; that number is derived, never counted up and
 * down, so a duplicate carrier or a re-drive calling this again cannot skew it. Under
 * the dispatch's row lock, the cursor moves past the next `window - in flight` rows
 * that still have queued cells, and those rows are returned for carriers. When nothing
 * of the dispatch is queued or running any more, the same call completes it (one
 * conditional UPDATE, one `dispatch` event).
 *
 * The SQL is the function `cellflow_advance_dispatch` (migration 0002, last 0017): one
 * round trip, so the lock every finishing carrier of the dispatch needs is held for
 * server time only. Each step also ages the cursor for the re-drive (at most once per
 * QUEUED_GRACE_MS it records the cursor with the time; see migration 0017 and
 * store/cells/orphans.ts), which rides the UPDATE a cursor move does anyway.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { retryOnConflict } from "@db/sqlstate";
import { sql } from "drizzle-orm";

/**
 * How long a handed-out row's queued cell may wait for its carrier (a job waiting for a
 * worker slot) before the re-drive takes the row for an orphan. One value for both ends:
 * the window step records the cursor's age with it and the re-drive reads that record
 * with it (an older record would say a row waited longer than it did). Passed to the SQL
 * as a parameter rather than written into the function, so it lives only here.
 */
export const QUEUED_GRACE_MS = 10_000;

export interface Advance {
  /** Rows to hand to carriers now, in position order. */
  rowIds: string[];
  completed: boolean;
}

export async function advanceDispatch(db: Db, dispatchId: string): Promise<Advance> {
  // One statement: a deadlock (a Stop or a stamping page holding the run's row while it
  // waits for cells) rolls it back whole, and it runs again.
  const [step] = await retryOnConflict(() =>
    queryRows<{ row_ids: string[] | null; completed: boolean }>(
      db,
      sql`select row_ids, completed from cellflow_advance_dispatch(${dispatchId}, null, ${QUEUED_GRACE_MS})`,
      { prepare: true },
    ),
  );
  return { rowIds: step?.row_ids ?? [], completed: step?.completed ?? false };
}

export interface Release {
  /** The row has queued cells: stamped while the carrier was finishing. */
  moreQueued: boolean;
  advances: (Advance & { dispatchId: string })[];
}

/**
 * Slides the window of each dispatch the carriers ran cells for, as they let go of their
 * rows (engine/advance-batcher.ts gathers the releases of a process): each dispatch once,
 * in id order (two such statements never wait for each other's), handing out at most one
 * row per carrier that released one of its rows (`slots`): the slot its row freed, which
 * that carrier then takes itself (two carriers finishing together each get one, instead
 * of the first taking both and queueing a job for the second's).
 *
 * It commits asynchronously: every carrier of a dispatch waits for the dispatch's row
 * lock here, and a synchronous commit would hold that lock through a WAL flush, which
 * serialised the whole window on the disk (3× the statement time in W1). Nothing is
 * lost by it: WAL is flushed in order, so any later synchronous commit (the handed-out
 * rows' carrier jobs, a charge, a Stop) flushes this cursor move first; what a crash
 * takes before that (this move, the steps around it, see cells/row-step.ts) is healed by
 * the re-drive, and a dispatch completion lost in a crash is completed again by it.
 */
export async function advanceSlots(
  db: Db,
  slots: readonly { dispatchId: string; slots: number }[],
): Promise<Release["advances"]> {
  if (slots.length === 0) return [];
  const ordered = [...slots].sort((a, b) => (a.dispatchId < b.dispatchId ? -1 : 1));
  // One statement: a deadlock (a Stop or a stamping page holding a run's row while it
  // waits for cells) rolls it back whole, and it runs again.
  const [row] = await retryOnConflict(() =>
    queryRows<{ advances: Release["advances"] }>(
      db,
      sql`select set_config('synchronous_commit', 'off', true) as async,
               coalesce((select jsonb_agg(jsonb_build_object(
                                  'dispatchId', d.id, 'rowIds', coalesce(to_jsonb(a.row_ids), '[]'::jsonb),
                                  'completed', coalesce(a.completed, false)) order by d.ord)
                           from jsonb_to_recordset(${JSON.stringify(ordered.map((s, ord) => ({ id: s.dispatchId, n: s.slots, ord })))}::jsonb)
                                  as d(id text, n int, ord int),
                                lateral cellflow_advance_dispatch(d.id, d.n, ${QUEUED_GRACE_MS}) a),
                        '[]'::jsonb) as advances`,
      { prepare: true },
    ),
  );
  return row?.advances ?? [];
}

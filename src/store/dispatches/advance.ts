/**
 * The sliding window. In flight = rows of the dispatch at or before its cursor that
 * still have a queued or running cell; that number is derived, never counted up and
 * down, so a duplicate carrier or a re-drive calling this again cannot skew it. Under
 * the dispatch's row lock, the cursor moves past the next `window - in flight` rows
 * that still have queued cells, and those rows are returned for carriers. When nothing
 * of the dispatch is queued or running any more, the same call completes it (one
 * conditional UPDATE, one `dispatch` event).
 *
 * The SQL is the function `cellflow_advance_dispatch` (migration 0002): one round trip,
 * so the lock every finishing carrier of the dispatch needs is held for server time only.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";

export interface Advance {
  /** Rows to hand to carriers now, in position order. */
  rowIds: string[];
  completed: boolean;
}

export async function advanceDispatch(db: Db, dispatchId: string): Promise<Advance> {
  const [step] = await queryRows<{ row_ids: string[] | null; completed: boolean }>(
    db,
    sql`select row_ids, completed from cellflow_advance_dispatch(${dispatchId})`,
  );
  return { rowIds: step?.row_ids ?? [], completed: step?.completed ?? false };
}

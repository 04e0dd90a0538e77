/**
 * One stamping page of a run (the Run request's own pages and the background job's), in
 * one transaction with the dispatch's progress. Invariants: the dispatch row is locked
 * first, so a Stop either waits for this page and then cancels its cells, or commits
 * first and this page sees what it did: a dispatch no longer active or no longer stamping
 * gets nothing, and the rows and groups scoped Stops took out (`excluded`) are left out.
 * The resume cursor moves in the same commit as the cells, so a crash between pages
 * re-does nothing and skips nothing.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { retryOnConflict } from "@db/sqlstate";
import { sql } from "drizzle-orm";
import type { RunMode } from "@/domain/statuses";
import type { TypedCondition } from "@/domain/where";
import { type StopExclusion, stampPage } from "../cells/stamp";

export interface StampProgress {
  /** False once there is nothing left to stamp (or the dispatch stopped). */
  more: boolean;
  cells: number;
  rows: number;
  /**
   * Other active runs of the table after a page of mode `all`, which may have taken over
   * their in-flight cells: their carriers may have left already, so the caller slides
   * their windows (one may be done now). Read in a statement after the page, so a run
   * whose cell the page replaced (waiting for that cell's lock) is among them; the
   * page's own snapshot could predate it.
   */
  displaced: string[];
}

/**
 * `then`: more of the page's transaction, run after its bookkeeping while the dispatch
 * row is still locked (a Run request's last page hands out the first window there), and
 * only when the page ran on an active, stamping dispatch; retried with the page. What it
 * answered in the transaction that committed is `after` (undefined: it did not run).
 */
export async function stampNextPage<T = never>(
  db: Db,
  dispatchId: string,
  pageRows: number,
  then?: (tx: Db, page: StampProgress) => Promise<T>,
): Promise<StampProgress & { after?: T }> {
  // Two runs stamping the same rows lock their cells in different orders: a deadlock
  // rolls one page back whole, and it runs again.
  return retryOnConflict(() =>
    db.transaction(async (tx) => {
      const [d] = await queryRows<{
        seq: number;
        table_id: string;
        group_ids: string[];
        mode: RunMode;
        row_ids: string[] | null;
        row_limit: number | null;
        stamp_after: number;
        stamped_rows: number;
        depends_on: Record<string, string[]> | null;
        excluded: StopExclusion[];
        where: TypedCondition[] | null;
        resume: boolean;
        stale_after_hours: number | null;
        created_at: string;
      }>(
        tx,
        sql`select seq, table_id, group_ids, mode, row_ids, row_limit, stamp_after, stamped_rows, depends_on, excluded,
                   "where", resume, stale_after_hours, created_at::text
            from dispatches where id = ${dispatchId} and status = 'active' and stamping for update`,
        { prepare: true },
      );
      if (!d) return { more: false, cells: 0, rows: 0, displaced: [] };
      const room =
        d.row_limit === null ? pageRows : Math.min(pageRows, d.row_limit - d.stamped_rows);
      const page =
        room > 0
          ? await stampPage(tx, {
              tableId: d.table_id,
              dispatchId,
              requestSeq: d.seq,
              groupIds: d.group_ids,
              mode: d.mode,
              rowIds: d.row_ids,
              afterPosition: d.stamp_after,
              maxRows: room,
              excluded: d.excluded,
              where: d.where,
              resume: d.resume,
              ...(d.stale_after_hours === null
                ? {}
                : { stale: { hours: d.stale_after_hours, asOf: d.created_at } }),
              ...(d.depends_on ? { dependsOn: d.depends_on } : {}),
            })
          : { rows: 0, cells: 0, lastPosition: null, scanned: 0 };
      // A page that found fewer rows than it asked for found the end: no empty page after
      // it (a run of a few rows is then stamped in one transaction, not two).
      const more =
        page.lastPosition !== null &&
        page.scanned >= room &&
        (d.row_limit === null || d.stamped_rows + page.rows < d.row_limit);
      // One statement: the run's bookkeeping, and the other active runs of the table
      // when this page took cells from them (mode all re-stamps their cells).
      const displaced = await queryRows<{ id: string }>(
        tx,
        sql`with upd as (
              update dispatches
                 set stamp_after = ${page.lastPosition ?? d.stamp_after}, stamped = stamped + ${page.cells},
                     stamped_rows = stamped_rows + ${page.rows}, stamping = ${more}, updated_at = now()
               where id = ${dispatchId}
              returning id)
            select id from dispatches
             where ${d.mode === "all" && page.cells > 0} and table_id = ${d.table_id}
               and status = 'active' and id <> ${dispatchId}
               and exists (select 1 from upd)`,
        { prepare: true },
      );
      const progress = {
        more,
        cells: page.cells,
        rows: page.rows,
        displaced: displaced.map((r) => r.id),
      };
      if (!then) return progress;
      return { ...progress, after: await then(tx, progress) };
    }),
  );
}

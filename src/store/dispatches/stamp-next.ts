/**
 * One stamping page of a run (the Run request's own pages and the background job's), in
 * one transaction with the dispatch's progress. Invariants: the dispatch row is locked
 * first, so a Stop either waits for this page and then cancels its cells, or commits
 * first and this page sees what it did: a dispatch no longer active or no longer stamping
 * gets nothing, and the rows and groups scoped Stops took out (`excluded`) are left out.
 * The resume cursor moves in the same commit as the cells, so a crash between pages
 * re-does nothing and skips nothing.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";
import { retryOnConflict } from "../../../db/sqlstate";
import type { RunMode } from "../../domain/statuses";
import { type StopExclusion, stampPage } from "../cells/stamp";

export interface StampProgress {
  /** False once there is nothing left to stamp (or the dispatch stopped). */
  more: boolean;
  cells: number;
  rows: number;
  /** Other runs whose in-flight cells the page took over (see StampResult). */
  displaced: string[];
}

export async function stampNextPage(
  db: Db,
  dispatchId: string,
  pageRows: number,
): Promise<StampProgress> {
  // Two runs stamping the same rows lock their cells in different orders: a deadlock
  // rolls one page back whole, and it runs again.
  return retryOnConflict(() =>
    db.transaction(async (tx) => {
      const [d] = await queryRows<{
        table_id: string;
        group_ids: string[];
        mode: RunMode;
        row_ids: string[] | null;
        row_limit: number | null;
        stamp_after: number;
        stamped_rows: number;
        depends_on: Record<string, string[]> | null;
        excluded: StopExclusion[];
      }>(
        tx,
        sql`select table_id, group_ids, mode, row_ids, row_limit, stamp_after, stamped_rows, depends_on, excluded
            from dispatches where id = ${dispatchId} and status = 'active' and stamping for update`,
      );
      if (!d) return { more: false, cells: 0, rows: 0, displaced: [] };
      const room =
        d.row_limit === null ? pageRows : Math.min(pageRows, d.row_limit - d.stamped_rows);
      const page =
        room > 0
          ? await stampPage(tx, {
              tableId: d.table_id,
              dispatchId,
              groupIds: d.group_ids,
              mode: d.mode,
              rowIds: d.row_ids,
              afterPosition: d.stamp_after,
              maxRows: room,
              excluded: d.excluded,
              ...(d.depends_on ? { dependsOn: d.depends_on } : {}),
            })
          : { rows: 0, cells: 0, lastPosition: null, displaced: [] };
      const more =
        page.lastPosition !== null &&
        (d.row_limit === null || d.stamped_rows + page.rows < d.row_limit);
      await tx.execute(
        sql`update dispatches
             set stamp_after = ${page.lastPosition ?? d.stamp_after}, stamped = stamped + ${page.cells},
                 stamped_rows = stamped_rows + ${page.rows}, stamping = ${more}, updated_at = now()
           where id = ${dispatchId}`,
      );
      return { more, cells: page.cells, rows: page.rows, displaced: page.displaced };
    }),
  );
}

/**
 * One background stamping page of a large run, in one transaction with the dispatch's
 * progress: the dispatch row is locked first (a Stop waits for this page, then sees its
 * cells), a dispatch no longer active or no longer stamping gets nothing, and the resume
 * cursor moves in the same commit as the cells, so a crash between pages re-does nothing
 * and skips nothing.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";
import type { RunMode } from "../../domain/statuses";
import { stampPage } from "../cells/stamp";

export interface StampProgress {
  /** False once there is nothing left to stamp (or the dispatch stopped). */
  more: boolean;
  cells: number;
}

export async function stampNextPage(
  db: Db,
  dispatchId: string,
  pageRows: number,
): Promise<StampProgress> {
  return db.transaction(async (tx) => {
    const [d] = await queryRows<{
      table_id: string;
      group_ids: string[];
      mode: RunMode;
      row_ids: string[] | null;
      row_limit: number | null;
      stamp_after: number;
      stamped_rows: number;
    }>(
      tx,
      sql`select table_id, group_ids, mode, row_ids, row_limit, stamp_after, stamped_rows
            from dispatches where id = ${dispatchId} and status = 'active' and stamping for update`,
    );
    if (!d) return { more: false, cells: 0 };
    const room = d.row_limit === null ? pageRows : Math.min(pageRows, d.row_limit - d.stamped_rows);
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
          })
        : { rows: 0, cells: 0, lastPosition: null };
    const more =
      page.lastPosition !== null &&
      (d.row_limit === null || d.stamped_rows + page.rows < d.row_limit);
    await tx.execute(
      sql`update dispatches
             set stamp_after = ${page.lastPosition ?? d.stamp_after}, stamped = stamped + ${page.cells},
                 stamped_rows = stamped_rows + ${page.rows}, stamping = ${more}, updated_at = now()
           where id = ${dispatchId}`,
    );
    return { more, cells: page.cells };
  });
}

/** Marks a dispatch as stamped up to `after` with the rest left to the background job. */
export async function continueStampingLater(
  db: Db,
  dispatchId: string,
  progress: { after: number; rows: number; cells: number },
): Promise<void> {
  await db.execute(
    sql`update dispatches set stamping = true, stamp_after = ${progress.after}, stamped_rows = ${progress.rows},
               stamped = ${progress.cells}, updated_at = now()
         where id = ${dispatchId}`,
  );
}

/** Ends background stamping of the table's active dispatches (all, or one); locks them. */
export async function endStamping(db: Db, tableId: string, dispatchId?: string): Promise<void> {
  await db.execute(
    dispatchId
      ? sql`update dispatches set stamping = false where table_id = ${tableId} and id = ${dispatchId} and status = 'active'`
      : sql`update dispatches set stamping = false where table_id = ${tableId} and status = 'active'`,
  );
}

/**
 * Records a Stop (see db/schema/stops.ts): from its commit on, a carrier's auto-run stamp
 * on a row it covers is refused until a run request made after it stamps the row. Made
 * under the table's stop lock (`stop-lock.ts`), which every such stamp takes too, so none
 * slips between the Stop's reading of cells and its commit. A Stop with a `where` covers the
 * rows that match it in this statement, listed in `stop_rows` in the same statement, so
 * the Stop's cancel, its hold and the runs' exclusions all name exactly the same rows.
 */

import type { Db } from "@db/client";
import { sql } from "drizzle-orm";
import type { TypedCondition } from "@/domain/where";
import { whereSql } from "../rows/where-sql";
import { textArray } from "../sql";

export interface StopRecord {
  tableId: string;
  dispatchId?: string;
  rowIds?: string[];
  groupIds?: string[];
  /** With `seq` (drawn by `holdStamping`): the Stop covers the rows matching it now. */
  where?: { seq: number; conditions: readonly TypedCondition[] };
}

export async function recordStop(db: Db, scope: StopRecord): Promise<void> {
  // A Stop of a run holds the run's groups (and what depends on them), not the whole row.
  const groups = scope.groupIds
    ? sql`${textArray(scope.groupIds)}`
    : scope.dispatchId
      ? sql`(select group_ids from dispatches where id = ${scope.dispatchId})`
      : sql`null::text[]`;
  const rowIds = scope.rowIds ? sql`${textArray(scope.rowIds)}` : sql`null::text[]`;
  if (!scope.where) {
    await db.execute(
      sql`insert into stops (table_id, row_ids, group_ids, dispatch_id)
          values (${scope.tableId}, ${rowIds}, ${groups}, ${scope.dispatchId ?? null})`,
    );
    return;
  }
  const only = scope.rowIds ? sql`and r.id = any(${rowIds})` : sql``;
  await db.execute(
    sql`with s as (
          insert into stops (seq, table_id, row_ids, group_ids, dispatch_id, matched)
          values (${scope.where.seq}, ${scope.tableId}, null, ${groups}, ${scope.dispatchId ?? null}, true)
          returning seq)
        insert into stop_rows (seq, row_id)
        select s.seq, r.id from s, rows r
         where r.table_id = ${scope.tableId} ${only} and ${whereSql(scope.where.conditions)}`,
  );
}

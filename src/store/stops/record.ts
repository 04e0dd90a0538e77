/**
 * Records a Stop (see db/schema/stops.ts): from its commit on, a carrier's auto-run stamp
 * on a row it covers is refused until a run request made after it stamps the row. Made
 * under the table's stop lock (`stop-lock.ts`), which every such stamp takes too, so none
 * slips between the Stop's reading of cells and its commit. A Stop with a `where` covers the
 * rows that match it in this statement, recorded in the same statement as ranges of
 * positions (`stop_ranges`), so the Stop's cancel, its hold and the runs' exclusions all
 * name exactly the same rows, and recording 450,000 matched rows writes as many entries
 * as the matches have unbroken stretches, not one per row.
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
  const stop = sql`insert into stops (seq, table_id, row_ids, group_ids, dispatch_id, matched)
          values (${scope.where.seq}, ${scope.tableId}, null, ${groups}, ${scope.dispatchId ?? null}, true)
          returning seq`;
  const matches = whereSql(scope.where.conditions);
  if (scope.rowIds) {
    // Named rows (at most the contract's cap): each matching one is its own range, read off
    // the key instead of a walk of the table.
    await db.execute(
      sql`with s as (${stop})
          insert into stop_ranges (seq, lo, hi)
          select s.seq, r.position, r.position from s, rows r
           where r.table_id = ${scope.tableId} and r.id = any(${rowIds}) and ${matches}`,
    );
    return;
  }
  // One walk of the table's rows in position order (off its position index): a stretch of
  // matching rows is the rows since the last one that did not match, so each stretch is
  // the matches sharing a count of misses so far. (One window that also looked ahead for
  // a stretch's end kept every row in its store: 83 MB on disk and twice the time at 1M.)
  await db.execute(
    sql`with s as (${stop}),
        walk as (
          select r.position, m.hit,
                 count(*) filter (where not m.hit) over (order by r.position rows unbounded preceding) as misses
            from rows r cross join lateral (select coalesce(${matches}, false) as hit) m
           where r.table_id = ${scope.tableId}
        )
        insert into stop_ranges (seq, lo, hi)
        select s.seq, min(w.position), max(w.position) from s, walk w
         where w.hit group by s.seq, w.misses`,
  );
}

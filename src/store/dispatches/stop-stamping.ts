/**
 * A Stop's hold on runs that are still stamping, made in the Stop's transaction before it
 * cancels cells. Invariants: every active run in the Stop's scope is locked first, in id
 * order, before the Stop locks any cell (a stamping page locks its run before its cells
 * too), so a page in progress commits before the Stop reads cells and the next page sees
 * the Stop; a Stop of a whole run (or of the whole table) ends its stamping; a Stop of
 * some rows or groups only records them in the run's `excluded`, and the run stamps
 * everything else.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { StopExclusion } from "../cells/stamp";

export async function holdStamping(
  db: Db,
  scope: {
    tableId: string;
    dispatchId?: string;
    rowIds?: string[];
    groupIds?: string[];
    /**
     * A Stop with a `where`: draw its number once the runs are locked (so it is newer than
     * any cell a page in progress stamped) and name it in the exclusions; `stop_ranges`
     * will hold its rows under that number.
     */
    matchRows?: boolean;
  },
): Promise<{ stopSeq: number | null }> {
  const only = scope.dispatchId ? sql`and d.id = ${scope.dispatchId}` : sql``;
  const matchRows = scope.matchRows ?? false;
  const whole = !scope.rowIds && !scope.groupIds && !matchRows;
  const exclusion: StopExclusion = { rows: scope.rowIds ?? null, groups: scope.groupIds ?? null };
  const entry = matchRows
    ? sql`${JSON.stringify(exclusion)}::jsonb || jsonb_build_object('stop', (select n from seq))`
    : sql`${JSON.stringify(exclusion)}::jsonb`;
  const change = whole
    ? sql`stamping = false`
    : sql`excluded = d.excluded || jsonb_build_array(${entry})`;
  // `seq` reads every locked target first (the count), so the number is drawn after the
  // locks are held.
  const [row] = await queryRows<{ seq: string | null }>(
    db,
    sql`with target as (
          select d.id, d.stamping from dispatches d
           where d.table_id = ${scope.tableId} and d.status = 'active' ${only}
           order by d.id
           for update
        ),
        seq as (
          select nextval('cellflow_execution_seq') as n from (select count(*) from target) t
           where ${matchRows}
        ),
        upd as (
          update dispatches d set ${change}, updated_at = now()
            from target where d.id = target.id and target.stamping
          returning d.id
        )
        select (select n from seq)::text as seq, (select count(*) from upd)::int as held`,
  );
  return { stopSeq: row?.seq ? Number(row.seq) : null };
}

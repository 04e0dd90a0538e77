/**
 * A Stop's hold on runs that are still stamping, made in the Stop's transaction before it
 * cancels cells. Invariants: every active run in the Stop's scope is locked first, in id
 * order, before the Stop locks any cell (a stamping page locks its run before its cells
 * too), so a page in progress commits before the Stop reads cells and the next page sees
 * the Stop; a Stop of a whole run (or of the whole table) ends its stamping; a Stop of
 * some rows or groups only records them in the run's `excluded`, and the run stamps
 * everything else.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";
import type { StopExclusion } from "../cells/stamp";

export async function holdStamping(
  db: Db,
  scope: { tableId: string; dispatchId?: string; rowIds?: string[]; groupIds?: string[] },
): Promise<void> {
  const only = scope.dispatchId ? sql`and d.id = ${scope.dispatchId}` : sql``;
  const whole = !scope.rowIds && !scope.groupIds;
  const exclusion: StopExclusion = { rows: scope.rowIds ?? null, groups: scope.groupIds ?? null };
  const change = whole
    ? sql`stamping = false`
    : sql`excluded = d.excluded || jsonb_build_array(${JSON.stringify(exclusion)}::jsonb)`;
  await queryRows(
    db,
    sql`with target as (
          select d.id, d.stamping from dispatches d
           where d.table_id = ${scope.tableId} and d.status = 'active' ${only}
           order by d.id
           for update
        )
        update dispatches d set ${change}, updated_at = now()
          from target where d.id = target.id and target.stamping
        returning d.id`,
  );
}

/**
 * Records a Stop (see db/schema/stops.ts): from its commit on, a carrier's auto-run stamp
 * on a row it covers is refused until something newer happens there. Made under the
 * table's stop lock (`stop-lock.ts`), which every such stamp takes too, so none slips
 * between the Stop's reading of cells and its commit.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { textArray } from "../sql";

export async function recordStop(
  db: Db,
  scope: { tableId: string; dispatchId?: string; rowIds?: string[]; groupIds?: string[] },
): Promise<void> {
  // A Stop of a run holds the run's groups (and what depends on them), not the whole row.
  const groups = scope.groupIds
    ? sql`${textArray(scope.groupIds)}`
    : scope.dispatchId
      ? sql`(select group_ids from dispatches where id = ${scope.dispatchId})`
      : sql`null::text[]`;
  const rows = scope.rowIds ? sql`${textArray(scope.rowIds)}` : sql`null::text[]`;
  await db.execute(
    sql`insert into stops (table_id, row_ids, group_ids, dispatch_id)
        values (${scope.tableId}, ${rows}, ${groups}, ${scope.dispatchId ?? null})`,
  );
}

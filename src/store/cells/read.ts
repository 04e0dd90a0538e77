import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";

export interface QueuedCell {
  groupId: string;
  executionId: string;
  dispatchId: string | null;
}

/** The row's `queued` cells, oldest stamp first. */
export function queuedCellsOfRow(db: Db, rowId: string): Promise<QueuedCell[]> {
  return queryRows<QueuedCell>(
    db,
    sql`select group_id as "groupId", execution_id as "executionId", dispatch_id as "dispatchId"
          from cells where row_id = ${rowId} and status = 'queued' order by queued_at, group_id`,
  );
}

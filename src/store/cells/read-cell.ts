/**
 * One cell as the API shows it, read in one statement: where its attempt stands, its
 * group's output values in the row, and its `details` (what each provider, step or model
 * did and cost). Null when the row is not in the table or the cell was never requested.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { CellWithDetails } from "@/contracts/cells";
import { effectiveStatus, isoTime } from "../sql";
import type { CellRef } from "./transition";

export async function readCell(
  db: Db,
  ref: CellRef & { tableId: string },
): Promise<CellWithDetails | null> {
  const [row] = await queryRows<CellWithDetails>(
    db,
    sql`select ${effectiveStatus("c")} as status, c.outcome, c.execution_id as "executionId", c.attempt, c.error,
               c.block_errors as "blockErrors",
               cellflow_group_outputs(t.schema, r.data, c.group_id) as outputs,
               c.details, ${isoTime(sql`c.updated_at`)} as "updatedAt"
          from cells c
          join rows r on r.id = c.row_id and r.table_id = ${ref.tableId}
          join tables t on t.id = r.table_id
         where c.row_id = ${ref.rowId} and c.group_id = ${ref.groupId}`,
  );
  return row ?? null;
}

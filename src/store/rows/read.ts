import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";
import type { RowView } from "@/contracts/rows";
import { effectiveStatus } from "../sql";

/** Rows are read straight into the API's shape: the SQL below builds exactly a RowView. */
export type RowRecord = RowView;

/**
 * The row columns plus its cells as one JSON object, keyed by group id; a cell's status as
 * reads report it (a queued cell a large Stop covers is `cancelled`).
 */
export const rowSelect = sql`
  r.id, r.position, r.data,
  to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt",
  to_char(r.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "updatedAt",
  coalesce((
    select jsonb_object_agg(c.group_id, jsonb_build_object(
      'status', ${effectiveStatus("c")}, 'outcome', c.outcome, 'executionId', c.execution_id,
      'dispatchId', c.dispatch_id, 'error', c.error, 'runningBlockIds', to_jsonb(c.running_block_ids),
      'blockErrors', c.block_errors,
      'updatedAt', to_char(c.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
      || case when jsonb_typeof(c.details -> 'winner') = 'number'
              then jsonb_build_object('winningStep', c.details -> 'winner') else '{}'::jsonb end)
    from cells c where c.row_id = r.id
  ), '{}'::jsonb) as cells`;

export function selectRows(where: SQL, tail: SQL = sql``): SQL {
  return sql`select ${rowSelect} from rows r where ${where} ${tail}`;
}

export async function getRow(db: Db, tableId: string, rowId: string): Promise<RowRecord | null> {
  const rows = await queryRows<RowRecord>(
    db,
    selectRows(sql`r.table_id = ${tableId} and r.id = ${rowId}`),
  );
  return rows[0] ?? null;
}

/** Only positions and values, for reads that never look at cells (CSV export). */
export async function listRowData(
  db: Db,
  tableId: string,
  after: number,
  limit: number,
): Promise<{ position: number; data: Record<string, unknown> }[]> {
  return queryRows<{ position: number; data: Record<string, unknown> }>(
    db,
    sql`select position, data from rows
         where table_id = ${tableId} and position > ${after}
         order by position limit ${limit}`,
  );
}

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { newId } from "@/domain/ids";
import { appendEvent } from "../events/append";
import type { RowRecord } from "./read";

/**
 * Inserts rows at the end of the table in one statement. Positions come from the table's
 * counter, bumped in the same statement, so concurrent inserts never share a position.
 * Returns null when the table does not exist (deleted meanwhile).
 */
export async function insertRows(
  db: Db,
  tableId: string,
  data: Record<string, unknown>[],
): Promise<RowRecord[] | null> {
  // A null value means "empty": it is simply not stored.
  const items = data.map((d) => ({
    id: newId("row"),
    data: Object.fromEntries(Object.entries(d).filter(([, v]) => v !== null)),
  }));
  return db.transaction(async (tx) => {
    const rows = await queryRows<RowRecord>(
      tx,
      sql`
        with pos as (
          update tables set next_position = next_position + ${items.length}
           where id = ${tableId}
          returning next_position - ${items.length} as start
        )
        insert into rows (id, table_id, position, data)
        select x.value->>'id', ${tableId}, pos.start + x.ord - 1, x.value->'data'
          from pos, jsonb_array_elements(${JSON.stringify(items)}::jsonb) with ordinality as x(value, ord)
        returning id, position, data,
          to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt",
          to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "updatedAt",
          '{}'::jsonb as cells`,
    );
    if (rows.length === 0) return null;
    rows.sort((a, b) => a.position - b.position);
    await appendEvent(tx, tableId, "rows", { op: "insert", rowIds: rows.map((r) => r.id) });
    return rows;
  });
}

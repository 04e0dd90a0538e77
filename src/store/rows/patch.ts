import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { appendEvent } from "../events/append";

/**
 * Merges `data` into the row (a null value clears that column). The merge happens in SQL,
 * so concurrent patches of different columns never lose each other's values.
 */
export async function patchRow(
  db: Db,
  patch: { tableId: string; rowId: string; data: Record<string, unknown> },
): Promise<{ id: string } | null> {
  const { tableId, rowId, data } = patch;
  const set = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== null));
  const clear = Object.keys(data).filter((k) => data[k] === null);
  return db.transaction(async (tx) => {
    const [row] = await queryRows<{ id: string }>(
      tx,
      sql`update rows
             set data = (data || ${JSON.stringify(set)}::jsonb)
                        - array(select jsonb_array_elements_text(${JSON.stringify(clear)}::jsonb)),
                 updated_at = now()
           where table_id = ${tableId} and id = ${rowId}
          returning id`,
    );
    if (!row) return null;
    await appendEvent(tx, tableId, "rows", {
      op: "update",
      rowIds: [rowId],
      columns: Object.keys(data),
    });
    return row;
  });
}

import { and, eq } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { rows } from "../../../db/schema";
import { appendEvent } from "../events/append";

/**
 * Deletes a row. Its cells go with it (foreign key cascade), so any attempt still running
 * for it finds no cell to write and stops as stale.
 */
export async function deleteRow(db: Db, tableId: string, rowId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const deleted = await tx
      .delete(rows)
      .where(and(eq(rows.tableId, tableId), eq(rows.id, rowId)))
      .returning({ id: rows.id });
    if (deleted.length === 0) return false;
    await appendEvent(tx, tableId, "rows", { op: "delete", rowIds: [rowId] });
    return true;
  });
}

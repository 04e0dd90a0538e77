/**
 * The table's default per-row budget (`maxCreditsPerRow`, kept in milli-credits). Runs
 * take it when they are created (store/dispatches/create.ts), so a change holds for the
 * runs created after it and leaves the runs under way as they started; a cell of no run
 * counts in the budget of the row's newest run (store/usage/reserve.ts). Each change appends a `schema`
 * event with the new default in its transaction, so open grids show it.
 */
import type { Db } from "@db/client";
import { tables } from "@db/schema";
import { and, eq, sql } from "drizzle-orm";
import { appendEvent } from "../events/append";
import { milliOf } from "../usage/amounts";
import { type TableRecord, tableColumns } from "./read";

/** null when the table is not the workspace's (or gone). */
export async function setRowBudget(
  db: Db,
  change: { workspaceId: string; tableId: string; credits: number | null },
): Promise<TableRecord | null> {
  const { workspaceId, tableId, credits } = change;
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(tables)
      .set({
        maxCreditsPerRowMilli: credits === null ? null : milliOf(credits),
        updatedAt: sql`now()`,
      })
      .where(and(eq(tables.id, tableId), eq(tables.workspaceId, workspaceId)))
      .returning(tableColumns);
    if (!row) return null;
    await appendEvent(tx, row.id, "schema", {
      schemaVersion: row.schemaVersion,
      name: row.name,
      maxCreditsPerRow: credits,
    });
    return row;
  });
}

/**
 * The table's auto-run switch. Turning it off takes the table's stop lock exclusively
 * first (as a Stop does): a carrier's auto-run stamp and an auto-fire's run creation hold
 * it shared from before the statement that reads the switch to their commit, so once this
 * commits none that read the switch on is still to commit. It cancels nothing.
 * Turning it on needs no lock: what fires afterwards fires. Each flip appends a `schema`
 * event with the switch, so open grids show it.
 */
import type { Db } from "@db/client";
import { tables } from "@db/schema";
import { and, eq, sql } from "drizzle-orm";
import { appendEvent } from "../events/append";
import { lockForStop } from "../stops/stop-lock";
import { type TableRecord, tableColumns } from "./read";

/** null when the table is not the workspace's (or gone). */
export async function setAutoRun(
  db: Db,
  change: { workspaceId: string; tableId: string; on: boolean },
): Promise<TableRecord | null> {
  const { workspaceId, tableId, on } = change;
  return db.transaction(async (tx) => {
    if (!on) await lockForStop(tx, tableId);
    const [row] = await tx
      .update(tables)
      .set({ autoRun: on, updatedAt: sql`now()` })
      .where(and(eq(tables.id, tableId), eq(tables.workspaceId, workspaceId)))
      .returning(tableColumns);
    if (!row) return null;
    // In the same transaction: every open view of the table learns the switch flipped.
    await appendEvent(tx, row.id, "schema", {
      schemaVersion: row.schemaVersion,
      name: row.name,
      autoRun: on,
    });
    return row;
  });
}

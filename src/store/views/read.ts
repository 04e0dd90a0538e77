/**
 * Reads of a table's saved views, always scoped to the workspace: another workspace's
 * view reads as absent.
 */
import type { Db } from "@db/client";
import { savedViews } from "@db/schema";
import { and, asc, eq } from "drizzle-orm";

/** A view as stored: `where` and `hiddenColumns` are the JSON given when it was saved. */
export interface ViewRecord {
  id: string;
  tableId: string;
  name: string;
  where: unknown;
  orderBy: string | null;
  dir: string;
  hiddenColumns: unknown;
  createdAt: Date;
  updatedAt: Date;
}

export const viewColumns = {
  id: savedViews.id,
  tableId: savedViews.tableId,
  name: savedViews.name,
  where: savedViews.where,
  orderBy: savedViews.orderBy,
  dir: savedViews.dir,
  hiddenColumns: savedViews.hiddenColumns,
  createdAt: savedViews.createdAt,
  updatedAt: savedViews.updatedAt,
};

export async function listViews(
  db: Db,
  workspaceId: string,
  tableId: string,
): Promise<ViewRecord[]> {
  return db
    .select(viewColumns)
    .from(savedViews)
    .where(and(eq(savedViews.workspaceId, workspaceId), eq(savedViews.tableId, tableId)))
    .orderBy(asc(savedViews.createdAt), asc(savedViews.id));
}

export async function getView(
  db: Db,
  view: { workspaceId: string; tableId: string; viewId: string },
): Promise<ViewRecord | null> {
  const [row] = await db
    .select(viewColumns)
    .from(savedViews)
    .where(
      and(
        eq(savedViews.id, view.viewId),
        eq(savedViews.tableId, view.tableId),
        eq(savedViews.workspaceId, view.workspaceId),
      ),
    )
    .limit(1);
  return row ?? null;
}

/**
 * Edits a saved view: the fields given replace the stored ones. Scoped in its WHERE to the
 * workspace and table, so another workspace's view is never touched (null: not found).
 */
import type { Db } from "@db/client";
import { savedViews } from "@db/schema";
import { and, eq, sql } from "drizzle-orm";
import type { SortDirection } from "@/contracts/rows";
import type { Where } from "@/contracts/where";
import { type ViewRecord, viewColumns } from "./read";

export interface ViewChange {
  name?: string;
  where?: Where | null;
  orderBy?: string | null;
  dir?: SortDirection;
  hiddenColumns?: string[];
}

export async function updateView(
  db: Db,
  target: { workspaceId: string; tableId: string; viewId: string },
  change: ViewChange,
): Promise<ViewRecord | null> {
  const [row] = await db
    .update(savedViews)
    .set({ ...change, updatedAt: sql`now()` })
    .where(
      and(
        eq(savedViews.id, target.viewId),
        eq(savedViews.tableId, target.tableId),
        eq(savedViews.workspaceId, target.workspaceId),
      ),
    )
    .returning(viewColumns);
  return row ?? null;
}

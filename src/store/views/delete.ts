/** Deletes a saved view, scoped in its WHERE to the workspace and table (false: not found). */
import type { Db } from "@db/client";
import { savedViews } from "@db/schema";
import { and, eq } from "drizzle-orm";

export async function deleteView(
  db: Db,
  target: { workspaceId: string; tableId: string; viewId: string },
): Promise<boolean> {
  const rows = await db
    .delete(savedViews)
    .where(
      and(
        eq(savedViews.id, target.viewId),
        eq(savedViews.tableId, target.tableId),
        eq(savedViews.workspaceId, target.workspaceId),
      ),
    )
    .returning({ id: savedViews.id });
  return rows.length === 1;
}

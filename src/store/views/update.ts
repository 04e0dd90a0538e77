/**
 * Edits a saved view: the fields given replace the stored ones. Scoped in its WHERE to the
 * workspace and table, so another workspace's view is never touched (null: not found).
 * Invariant: a view without an order stores `dir` "asc" (its direction means nothing); the
 * statement decides it from the order it leaves, given or stored, so a `dir` alone sent to
 * a view without an order, or an order cleared, cannot leave "desc" behind.
 */
import type { Db } from "@db/client";
import { savedViews } from "@db/schema";
import { and, eq, type SQL, sql } from "drizzle-orm";
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

function dirAfter(change: ViewChange): SortDirection | SQL | undefined {
  if (change.orderBy === null) return "asc";
  if (change.orderBy !== undefined) return change.dir;
  const dir = change.dir === undefined ? sql`${savedViews.dir}` : sql`${change.dir}::text`;
  return sql`case when ${savedViews.orderBy} is null then 'asc' else ${dir} end`;
}

export async function updateView(
  db: Db,
  target: { workspaceId: string; tableId: string; viewId: string },
  change: ViewChange,
): Promise<ViewRecord | null> {
  const [row] = await db
    .update(savedViews)
    .set({ ...change, dir: dirAfter(change), updatedAt: sql`now()` })
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

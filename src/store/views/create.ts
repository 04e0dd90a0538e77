/**
 * Saves a view. Invariant: a table never has more than MAX_VIEWS_PER_TABLE views: the
 * insert runs under the table's cap behind a lock on the table's row
 * (store/tables/capped-insert.ts), so creates at the cap minus one take turns.
 */
import type { Db } from "@db/client";
import { savedViews } from "@db/schema";
import { eq, sql } from "drizzle-orm";
import type { SortDirection } from "@/contracts/rows";
import { MAX_VIEWS_PER_TABLE } from "@/contracts/views";
import type { Where } from "@/contracts/where";
import { insertUnderTableCap } from "@/store/tables/capped-insert";
import { type ViewRecord, viewColumns } from "./read";

export interface NewView {
  id: string;
  workspaceId: string;
  tableId: string;
  name: string;
  where: Where | null;
  orderBy: string | null;
  dir: SortDirection;
  hiddenColumns: string[];
}

export type ViewCreated =
  | { ok: true; view: ViewRecord }
  | { ok: false; reason: "table_not_found" | "limit_reached" };

export async function insertView(db: Db, view: NewView): Promise<ViewCreated> {
  const created = await insertUnderTableCap(
    db,
    {
      workspaceId: view.workspaceId,
      tableId: view.tableId,
      of: "saved_views",
      cap: MAX_VIEWS_PER_TABLE,
    },
    sql`insert into saved_views
          (id, workspace_id, table_id, name, "where", order_by, dir, hidden_columns)
        select ${view.id}, ${view.workspaceId}, ${view.tableId}, ${view.name},
               ${view.where === null ? null : JSON.stringify(view.where)}::jsonb,
               ${view.orderBy}::text, ${view.dir}, ${JSON.stringify(view.hiddenColumns)}::jsonb`,
    async (tx, id) => {
      const [saved] = await tx.select(viewColumns).from(savedViews).where(eq(savedViews.id, id));
      return saved;
    },
  );
  return created.ok ? { ok: true, view: created.saved } : created;
}

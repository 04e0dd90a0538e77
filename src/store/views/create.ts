/**
 * Saves a view. Invariant: a table never has more than MAX_VIEWS_PER_TABLE views. The cap
 * is the insert's own WHERE, and the table's row is locked (FOR NO KEY UPDATE, which row
 * inserts' foreign-key locks do not wait on) in a statement before it, so two creates at
 * the cap minus one take turns: the second insert's count runs on a snapshot taken after
 * the first committed. A count in the insert's statement alone would not do: both would
 * count on snapshots from before either inserted.
 */
import { type Db, queryRows } from "@db/client";
import { savedViews } from "@db/schema";
import { eq, sql } from "drizzle-orm";
import type { SortDirection } from "@/contracts/rows";
import { MAX_VIEWS_PER_TABLE } from "@/contracts/views";
import type { Where } from "@/contracts/where";
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
  return db.transaction(async (tx) => {
    const locked = await queryRows<{ id: string }>(
      tx,
      sql`select id from tables
          where id = ${view.tableId} and workspace_id = ${view.workspaceId}
          for no key update`,
    );
    if (locked.length === 0) return { ok: false, reason: "table_not_found" };
    const [row] = await queryRows<{ id: string }>(
      tx,
      sql`insert into saved_views
            (id, workspace_id, table_id, name, "where", order_by, dir, hidden_columns)
          select ${view.id}, ${view.workspaceId}, ${view.tableId}, ${view.name},
                 ${view.where === null ? null : JSON.stringify(view.where)}::jsonb,
                 ${view.orderBy}::text, ${view.dir}, ${JSON.stringify(view.hiddenColumns)}::jsonb
          where (select count(*) from saved_views where table_id = ${view.tableId})
                < ${MAX_VIEWS_PER_TABLE}
          returning id`,
    );
    if (!row) return { ok: false, reason: "limit_reached" };
    // Read back through the schema's columns: raw statements return timestamps as text.
    const [saved] = await tx.select(viewColumns).from(savedViews).where(eq(savedViews.id, row.id));
    if (!saved) throw new Error("view insert returned nothing");
    return { ok: true, view: saved };
  });
}

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { tables } from "@db/schema";
import { and, desc, eq, sql } from "drizzle-orm";
import type { Plan } from "@/domain/statuses";

export const tableColumns = {
  id: tables.id,
  name: tables.name,
  schema: tables.schema,
  schemaVersion: tables.schemaVersion,
  autoRun: tables.autoRun,
  maxCreditsPerRowMilli: tables.maxCreditsPerRowMilli,
  rowCount: tables.rowCount,
  createdAt: tables.createdAt,
  updatedAt: tables.updatedAt,
};

export interface TableRecord {
  id: string;
  name: string;
  /** Validated on the way in; parse with contracts/table TableSchema when reading. */
  schema: unknown;
  schemaVersion: number;
  /** The auto-run switch. */
  autoRun: boolean;
  /** The default per-row budget in milli-credits (null: none). */
  maxCreditsPerRowMilli: number | null;
  /** The maintained count (tables.row_count), not a count of the rows. */
  rowCount: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The select of one table of a workspace, for `getTable` and the import's locked read. */
export function selectTable(db: Db, workspaceId: string, id: string) {
  return db
    .select(tableColumns)
    .from(tables)
    .where(and(eq(tables.id, id), eq(tables.workspaceId, workspaceId)));
}

export async function getTable(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<TableRecord | null> {
  const [row] = await selectTable(db, workspaceId, id).limit(1);
  return row ?? null;
}

export async function listTables(db: Db, workspaceId: string): Promise<TableRecord[]> {
  return db
    .select(tableColumns)
    .from(tables)
    .where(eq(tables.workspaceId, workspaceId))
    .orderBy(desc(tables.createdAt));
}

/** How full the table is and under which plan (null: no such table). */
export async function tableFill(
  db: Db,
  tableId: string,
): Promise<{ plan: Plan; rowCount: number } | null> {
  const [row] = await queryRows<{ plan: Plan; rowCount: number }>(
    db,
    sql`select w.plan, t.row_count::int as "rowCount"
          from tables t join workspaces w on w.id = t.workspace_id where t.id = ${tableId}`,
  );
  return row ?? null;
}

import type { Db } from "@db/client";
import { rows, tables } from "@db/schema";
import { and, count, desc, eq } from "drizzle-orm";

export const tableColumns = {
  id: tables.id,
  name: tables.name,
  schema: tables.schema,
  schemaVersion: tables.schemaVersion,
  autoRun: tables.autoRun,
  maxCreditsPerRowMilli: tables.maxCreditsPerRowMilli,
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
  createdAt: Date;
  updatedAt: Date;
}

export async function getTable(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<TableRecord | null> {
  const [row] = await db
    .select(tableColumns)
    .from(tables)
    .where(and(eq(tables.id, id), eq(tables.workspaceId, workspaceId)))
    .limit(1);
  return row ?? null;
}

export async function countRows(db: Db, tableId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(rows).where(eq(rows.tableId, tableId));
  return row?.n ?? 0;
}

export async function listTables(
  db: Db,
  workspaceId: string,
): Promise<(TableRecord & { rowCount: number })[]> {
  return db
    .select({ ...tableColumns, rowCount: db.$count(rows, eq(rows.tableId, tables.id)) })
    .from(tables)
    .where(eq(tables.workspaceId, workspaceId))
    .orderBy(desc(tables.createdAt));
}

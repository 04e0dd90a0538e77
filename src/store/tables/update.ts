import type { Db } from "@db/client";
import { tables } from "@db/schema";
import { and, eq, sql } from "drizzle-orm";
import type { TableSchema } from "@/contracts/table";
import { appendEvent } from "../events/append";
import { type TableRecord, tableColumns } from "./read";

export type UpdateTableOutcome = { ok: true; value: TableRecord } | { ok: false; reason: "stale" };

/**
 * Replaces name and schema if the schema is still at `expectedVersion` (optimistic
 * concurrency: two editors never silently overwrite each other). Zero rows → `stale`;
 * the caller tells "gone" from "changed meanwhile" by reading again.
 */
export async function updateTable(
  db: Db,
  update: {
    workspaceId: string;
    tableId: string;
    expectedVersion: number;
    next: { name: string; schema: TableSchema };
  },
): Promise<UpdateTableOutcome> {
  const { workspaceId, tableId, expectedVersion, next } = update;
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(tables)
      .set({
        name: next.name,
        schema: next.schema,
        schemaVersion: sql`${tables.schemaVersion} + 1`,
        updatedAt: sql`now()`,
      })
      .where(
        and(
          eq(tables.id, tableId),
          eq(tables.workspaceId, workspaceId),
          eq(tables.schemaVersion, expectedVersion),
        ),
      )
      .returning(tableColumns);
    if (!row) return { ok: false, reason: "stale" } as const;
    await appendEvent(tx, row.id, "schema", { schemaVersion: row.schemaVersion, name: row.name });
    return { ok: true, value: row } as const;
  });
}

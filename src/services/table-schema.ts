/** A table's schema as the services check requests against it (null: no such table here). */
import { TableSchema } from "@/contracts/table";
import { getTable } from "@/store/tables/read";
import type { ServiceContext } from "./context";

export async function tableSchema(
  ctx: ServiceContext,
  tableId: string,
): Promise<TableSchema | null> {
  const table = await getTable(ctx.db, ctx.workspaceId, tableId);
  return table ? TableSchema.parse(table.schema) : null;
}

import type { Db } from "@db/client";
import { tables } from "@db/schema";
import type { TableSchema } from "@/contracts/table";
import { newId } from "@/domain/ids";
import { appendEvent } from "../events/append";
import { type TableRecord, tableColumns } from "./read";

export async function createTable(
  db: Db,
  workspaceId: string,
  input: { name: string; schema: TableSchema },
): Promise<TableRecord> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(tables)
      .values({ id: newId("tbl"), workspaceId, name: input.name, schema: input.schema })
      .returning(tableColumns);
    if (!row) throw new Error("table insert returned nothing");
    await appendEvent(tx, row.id, "schema", { schemaVersion: row.schemaVersion, name: row.name });
    return row;
  });
}

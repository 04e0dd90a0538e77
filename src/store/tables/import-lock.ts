import type { Db } from "@db/client";
import { selectTable, type TableRecord } from "./read";

/**
 * The table, its row locked until the caller's transaction ends (null: no such table in
 * the workspace). The lock is the one the insert statement's update of the row takes
 * (FOR NO KEY UPDATE): a CSV import takes it first, so the columns it judges the file
 * against cannot change under it, and concurrent inserts wait for it rather than place
 * rows among its own. Readers, and the foreign keys of rows and cells, do not wait.
 */
export async function lockTableForImport(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<TableRecord | null> {
  const [row] = await selectTable(db, workspaceId, id).for("no key update");
  return row ?? null;
}

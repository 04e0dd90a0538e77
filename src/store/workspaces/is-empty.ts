import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

/** True when the workspace has neither tables nor workflows. */
export async function workspaceIsEmpty(db: Db, workspaceId: string): Promise<boolean> {
  const [existing] = await queryRows<{ n: number }>(
    db,
    sql`select (select count(*) from tables where workspace_id = ${workspaceId})::int
             + (select count(*) from workflows where workspace_id = ${workspaceId})::int as n`,
  );
  return (existing?.n ?? 0) === 0;
}

/**
 * Child run records of executions the cell no longer lists: neither its current one nor
 * one of its kept attempts (cell_attempts keeps the last 20). A deleted row takes its
 * records with it (foreign key).
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

export async function pruneChildRuns(db: Db): Promise<number> {
  const rows = await queryRows<{ one: number }>(
    db,
    sql`delete from child_runs cr
         where cr.started_at < now() - interval '1 hour'
           and not exists (select 1 from cells c
                            where c.row_id = cr.row_id and c.group_id = cr.group_id
                              and c.execution_id = cr.execution_id)
           and not exists (select 1 from cell_attempts a
                            where a.row_id = cr.row_id and a.group_id = cr.group_id
                              and a.execution_id = cr.execution_id)
        returning 1 as one`,
  );
  return rows.length;
}

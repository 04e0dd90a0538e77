/**
 * Step records nothing reads any more: of an execution that is neither its cell's current
 * one, nor one that the current one resumes (`executions.resumes`: only the current
 * execution runs again or is resumed), nor one of the cell's kept attempts (whose history
 * lists its foreach items' outputs from these records), as child runs are pruned. A
 * deleted row takes its records with it (foreign key). In batches, so no statement runs
 * long.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";

const BATCH = 10_000;

export async function pruneExecutionSteps(db: Db): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await queryRows<{ n: number }>(
      db,
      sql`with doomed as (
            select s.execution_id, s.scope, s.key from execution_steps s
             where s.created_at < now() - interval '1 hour'
               and not exists (select 1 from cells c left join executions e on e.id = c.execution_id
                                where c.row_id = s.row_id and c.group_id = s.group_id
                                  and (c.execution_id = s.execution_id
                                       or s.execution_id = any(e.resumes)))
               and not exists (select 1 from cell_attempts a
                                where a.row_id = s.row_id and a.group_id = s.group_id
                                  and a.execution_id = s.execution_id)
             limit ${BATCH}
          ), del as (
            delete from execution_steps s using doomed d
             where s.execution_id = d.execution_id and s.scope = d.scope and s.key = d.key
            returning 1
          )
          select count(*)::int as n from del`,
    );
    total += row?.n ?? 0;
    if ((row?.n ?? 0) < BATCH) return total;
  }
}

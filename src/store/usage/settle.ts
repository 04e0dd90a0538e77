/**
 * Settling: reservations become charges in the statement of the fenced write that records
 * the answer they paid for (an attempt's terminal write in `row-step.ts`, a block's
 * checkpoint in `executions/checkpoint.ts`). Invariant: a key is charged only if that
 * write won its fence — the CTEs below read the keys from the write's own RETURNING rows,
 * so a write that matched nothing settles nothing and the reservation is released when
 * the attempt ends — and only the reservation of the attempt that wrote is settled.
 * The workspace's month counter moves in the same statement.
 */

import { type SQL, sql } from "drizzle-orm";
import { MONTH } from "./amounts";

/**
 * CTEs `<name>_settled` and `<name>_ws`, settling the keys of `won`: a relation with
 * columns `charge_id`, `source`, `cell_execution_id`, `attempt`. Returns the CTE list
 * (no leading `with`), to join a statement's other CTEs.
 */
export function settleCtes(won: SQL, name: string): SQL {
  const settled = sql.raw(`${name}_settled`);
  return sql`${settled} as (
          update usage u set state = 'charged', charged_at = now()
            from (${won}) k
           where u.execution_id = k.charge_id and u.source = k.source and u.state = 'reserved'
             and u.cell_execution_id = k.cell_execution_id and u.attempt = k.attempt
          returning u.workspace_id, u.milli),
        ${sql.raw(`${name}_ws`)} as (
          update workspaces w
             set used_milli = (case when w.credits_month = ${MONTH} then w.used_milli else 0 end) + s.m,
                 credits_month = ${MONTH}, reserved_milli = w.reserved_milli - s.m
            from (select workspace_id, sum(milli) as m from ${settled} group by workspace_id) s
           where w.id = s.workspace_id
          returning 1)`;
}

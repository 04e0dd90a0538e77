/**
 * Settling: reservations become charges in the statement of the fenced write that records
 * the answer they paid for (an attempt's terminal write in `row-step.ts`, a block's
 * checkpoint in `executions/checkpoint.ts`, a step's record in `execution-steps/record.ts`).
 * Invariant: a key is charged only if that write won its fence — the CTEs below read the
 * keys from the write's own RETURNING rows, so a write that matched nothing settles nothing
 * and the reservation is released when the attempt ends — and only the reservation of the
 * attempt that wrote is settled. The workspace's month counter moves in the same statement.
 *
 * A key may carry the amount to charge (`milli`: an llm call is reserved at its estimate
 * and charged its real usage); absent, the reservation is charged as it is. The entry then
 * holds what was charged; the workspace's `used` grows by that and its `reserved` shrinks
 * by what was reserved; a capped run's `committed_milli` (charged plus reserved) moves by
 * the difference, so its `maxCredits` and the row budgets go on counting what was charged.
 * A charge above its reservation (an input longer in tokens than its estimate) is charged
 * in full: the caps held at the reservation, so a cap is passed by at most the excess of the
 * calls in flight when it was reached, and the next reservation sees it and is refused.
 */

import { type SQL, sql } from "drizzle-orm";
import { MONTH } from "./amounts";

/**
 * CTEs `<name>_settled`, `<name>_run` and `<name>_ws`, settling the keys of `won`: a
 * relation with columns `charge_id`, `source`, `cell_execution_id`, `attempt` and `milli`
 * (null: charge what was reserved). Returns the CTE list (no leading `with`), to join a
 * statement's other CTEs.
 */
export function settleCtes(won: SQL, name: string): SQL {
  const settled = sql.raw(`${name}_settled`);
  const run = sql.raw(`${name}_run`);
  // `reserved` is read back from the entry as the statement found it: a subquery in
  // RETURNING sees the row version from before this very UPDATE (its own change is not
  // visible to the statement), and runs only for the keys settled (none on most writes).
  return sql`${settled} as (
          update usage u set state = 'charged', charged_at = now(),
                             milli = greatest(coalesce(k.milli, u.milli), 0)
            from (${won}) k
           where u.execution_id = k.charge_id and u.source = k.source and u.state = 'reserved'
             and u.cell_execution_id = k.cell_execution_id and u.attempt = k.attempt
          returning u.workspace_id, u.dispatch_id, u.milli as charged,
                    (select o.milli from usage o where o.id = u.id) as reserved),
        -- Only where a charge differs from its reservation, and only a capped run keeps the
        -- total; its row before the workspace's, the order a reservation takes them in.
        ${run} as (
          update dispatches d set committed_milli = d.committed_milli + s.delta
            from (select dispatch_id, sum(charged - reserved) as delta from ${settled}
                   where dispatch_id is not null and charged <> reserved group by dispatch_id) s
           where d.id = s.dispatch_id and d.max_credits_milli is not null and s.delta <> 0
          returning 1),
        ${sql.raw(`${name}_ws`)} as (
          update workspaces w
             set used_milli = (case when w.credits_month = ${MONTH} then w.used_milli else 0 end) + s.c,
                 credits_month = ${MONTH}, reserved_milli = w.reserved_milli - s.r
            from (select workspace_id, sum(charged) as c, sum(reserved) as r from ${settled}
                   group by workspace_id) s
           where w.id = s.workspace_id and (select count(*) from ${run}) >= 0
          returning 1)`;
}

/**
 * Whether a filled answer is paid for, read from the ledger in the statement that serves
 * it: `paid` when it names no charge key (a free answer, or one kept before keys were
 * recorded) or every key it names is charged; `pending` while one is still reserved (the
 * write that records the answer, and charges it, has not committed: a waterfall's steps
 * wait for its last one); `released` when one of them has no ledger entry left (its
 * reservation was given back: a Stop, a lost race, a crash, so the answer reached no cell
 * that paid for it). Invariant: an answer whose charge was released is never served
 * again; one served while pending is served free only to callers running at the same
 * time as the attempt that pays for it.
 */
import { type SQL, sql } from "drizzle-orm";

/**
 * The paid state (`'paid' | 'pending' | 'released'`, as text: only SQL reads it) of the
 * entry whose `paid_by` is `paidBy` (a column reference).
 */
export function paidState(paidBy: SQL): SQL {
  const keys = sql`jsonb_to_recordset(${paidBy}) as k("chargeId" text, source text)`;
  return sql`(case
    when jsonb_array_length(${paidBy}) = 0 then 'paid'
    when exists (select 1 from ${keys}
                  where not exists (select 1 from usage u
                                     where u.execution_id = k."chargeId" and u.source = k.source))
      then 'released'
    when exists (select 1 from ${keys}
                   join usage u on u.execution_id = k."chargeId" and u.source = k.source
                  where u.state <> 'charged')
      then 'pending'
    else 'paid' end)`;
}

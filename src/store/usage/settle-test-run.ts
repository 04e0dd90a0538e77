/**
 * A test run's end: the paid answers its response shows become charges, and whatever else
 * it reserved is given back, in one transaction. Invariants: only `reserved` entries of
 * this test run are charged (a key is charged once), each at the amount its answer cost
 * (an llm call's real usage, which may differ from its reservation; else what was
 * reserved); the workspace's month counter and its reserved total move in the same
 * statement as the entries; nothing of the run stays reserved after it.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { ChargeKey } from "@/domain/charges";
import { jsonb } from "../sql";
import { MONTH } from "./amounts";
import { TEST_RUN_ATTEMPT } from "./reserve-test-call";

/** Returns the milli-credits charged. */
export async function settleTestRun(
  db: Db,
  r: { testRunId: string; charges: readonly ChargeKey[] },
): Promise<number> {
  return db.transaction(async (tx) => {
    let charged = 0;
    if (r.charges.length > 0) {
      const keys = r.charges.map((c) => ({
        chargeId: c.chargeId,
        source: c.source,
        milli: c.milli ?? null,
      }));
      const [row] = await queryRows<{ milli: number }>(
        tx,
        sql`with k as (
              select * from jsonb_to_recordset(${jsonb(keys)}) as k("chargeId" text, source text, milli bigint)),
            held as (
              select u.id, u.workspace_id, u.milli as held, coalesce(k.milli, u.milli) as amount
                from usage u join k on u.execution_id = k."chargeId" and u.source = k.source
               where u.state = 'reserved' and u.cell_execution_id = ${r.testRunId}
                 and u.attempt = ${TEST_RUN_ATTEMPT}::int
                 for update of u),
            upd as (
              update usage u set state = 'charged', charged_at = now(), milli = held.amount
                from held where u.id = held.id
              returning held.workspace_id, held.held, held.amount),
            ws as (
              update workspaces w
                 set used_milli = (case when w.credits_month = ${MONTH} then w.used_milli else 0 end) + s.amount,
                     credits_month = ${MONTH}, reserved_milli = w.reserved_milli - s.held
                from (select workspace_id, sum(held) as held, sum(amount) as amount
                        from upd group by workspace_id) s
               where w.id = s.workspace_id
              returning 1)
            select coalesce(sum(amount), 0)::bigint as milli from upd`,
      );
      charged = Number(row?.milli ?? 0);
    }
    await tx.execute(
      sql`select cellflow_release_reserved(${r.testRunId}, ${TEST_RUN_ATTEMPT}::int)`,
    );
    return charged;
  });
}

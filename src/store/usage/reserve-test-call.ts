/**
 * A test run's reservation (`POST /api/workflows/:id/test`): credits set aside for one
 * charge key before its paid call, with no cell. Invariants: the workspace's month cap
 * holds for what is charged plus what is reserved plus this call (one conditional UPDATE
 * of the workspace row, as a cell's reservation: a concurrent one waits for it and
 * re-checks on the row it committed); the entry names the test run where a cell's names
 * its attempt (`cell_execution_id` = the test run's id, `attempt` = TEST_RUN_ATTEMPT, no
 * table, row, group or run), so cellflow_release_reserved(testRunId, TEST_RUN_ATTEMPT)
 * gives back whatever the run still holds and no cell's trigger ever touches it; a key
 * already in the ledger is not reserved again.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { ChargeKey } from "@/domain/charges";
import { MONTH } from "./amounts";

/** A cell's attempts count from 1: 0 marks a test run's entries. */
export const TEST_RUN_ATTEMPT = 0;

export type TestReservation = { ok: true } | { ok: false; reason: "monthly_credits" };

export async function reserveTestCall(
  db: Db,
  r: {
    workspaceId: string;
    testRunId: string;
    charge: ChargeKey;
    milli: number;
    /** The month's cap in credits; null: none. */
    monthlyCredits: number | null;
  },
): Promise<TestReservation> {
  const cap = r.monthlyCredits === null ? null : Math.round(r.monthlyCredits * 1000);
  const [row] = await queryRows<{ reserved: boolean; prior: boolean }>(
    db,
    sql`with prior as (
          select 1 from usage where execution_id = ${r.charge.chargeId} and source = ${r.charge.source}),
        upd as (
          update workspaces w set reserved_milli = w.reserved_milli + ${r.milli}
           where w.id = ${r.workspaceId} and not exists (select 1 from prior)
             and (${cap}::bigint is null
                  or (case when w.credits_month = ${MONTH} then w.used_milli else 0 end)
                       + w.reserved_milli + ${r.milli} <= ${cap}::bigint)
          returning w.id),
        ins as (
          insert into usage (workspace_id, execution_id, source, milli, state, cell_execution_id, attempt)
          select ${r.workspaceId}, ${r.charge.chargeId}, ${r.charge.source}, ${r.milli}, 'reserved',
                 ${r.testRunId}, ${TEST_RUN_ATTEMPT}::int
            from upd
          returning 1)
        select exists (select 1 from ins) as reserved, exists (select 1 from prior) as prior`,
  );
  return row?.reserved || row?.prior ? { ok: true } : { ok: false, reason: "monthly_credits" };
}

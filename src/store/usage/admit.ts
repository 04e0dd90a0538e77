/**
 * Admission: charge an attempt's credits before it calls a paid provider. Invariants:
 * one charge per (execution id, source) whatever the retries (the ledger's unique key,
 * checked in the same statement); the month's total never passes the cap, however many
 * attempts are admitted at once (one conditional UPDATE of the workspace row: a second
 * admission waits for the first and re-checks the cap on the row it committed); and a
 * run with a credit cap never passes it either: the same statement first locks the run's
 * dispatch row (so it reads the committed count, and the next admission of that run
 * waits for this one), charges only if both caps hold, and counts the charge on the run
 * only if the workspace was charged, so the two counters move together or not at all.
 * A run without a cap is neither locked nor counted (the statement is what it was).
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { HaltReason } from "@/domain/statuses";

export type Admission = { ok: true; charged: boolean } | { ok: false; reason: HaltReason };

const MONTH = sql`date_trunc('month', now() at time zone 'utc')::date`;

export async function admit(
  db: Db,
  charge: {
    workspaceId: string;
    executionId: string;
    source: string;
    credits: number;
    /** null: no cap. */
    monthlyCredits: number | null;
    /** The run the attempt's cell belongs to (null: none, never capped). */
    dispatchId?: string | null;
  },
): Promise<Admission> {
  const { workspaceId, executionId, source, credits } = charge;
  const spentThisMonth = sql`(case when w.credits_month = ${MONTH} then w.credits_used else 0 end)`;
  // Locked before the workspace row (always in that order, so two admissions cannot
  // deadlock); `for no key update` waits for a concurrent admission of the same run and
  // then reads the row it committed.
  const [row] = await queryRows<{ prior: boolean; charged: number; overRunCap: boolean }>(
    db,
    sql`with prior as (select 1 from usage where execution_id = ${executionId} and source = ${source}),
        run as materialized (
          select d.id, d.credits_used + ${credits} <= d.max_credits as fits
            from dispatches d
           where d.id = ${charge.dispatchId ?? null}::text and d.max_credits is not null
             for no key update
        ),
        upd as (
          update workspaces w
             set credits_used = ${spentThisMonth} + ${credits}, credits_month = ${MONTH}
           where w.id = ${workspaceId} and not exists (select 1 from prior)
             and (${charge.monthlyCredits}::int is null or ${spentThisMonth} + ${credits} <= ${charge.monthlyCredits}::int)
             and coalesce((select fits from run), true)
          returning w.id
        ),
        counted as (
          update dispatches d set credits_used = d.credits_used + ${credits}
           where d.id in (select id from run) and exists (select 1 from upd)
          returning 1
        ),
        ins as (
          insert into usage (workspace_id, execution_id, source, credits)
          select ${workspaceId}, ${executionId}, ${source}, ${credits} from upd
          on conflict (execution_id, source) do nothing
          returning 1
        )
        select exists (select 1 from prior) as prior, (select count(*) from upd)::int as charged,
               not coalesce((select fits from run), true) as "overRunCap",
               (select count(*) from counted)::int as counted,
               (select count(*) from ins)::int as recorded`,
  );
  if (row?.prior) return { ok: true, charged: false };
  if (row?.charged === 1) return { ok: true, charged: true };
  return { ok: false, reason: row?.overRunCap ? "run_credit_cap" : "monthly_credits" };
}

/**
 * Admission: charge an attempt's credits before it calls a paid provider. Invariants:
 * one charge per (execution id, source) whatever the retries (the ledger's unique key,
 * checked in the same statement); the month's total never passes the cap, however many
 * attempts are admitted at once (one conditional UPDATE of the workspace row: a second
 * admission waits for the first and re-checks the cap on the row it committed).
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";

export type Admission = { ok: true; charged: boolean } | { ok: false; reason: "exhausted" };

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
  },
): Promise<Admission> {
  const { workspaceId, executionId, source, credits } = charge;
  const spentThisMonth = sql`(case when w.credits_month = ${MONTH} then w.credits_used else 0 end)`;
  const [row] = await queryRows<{ prior: boolean; charged: number }>(
    db,
    sql`with prior as (select 1 from usage where execution_id = ${executionId} and source = ${source}),
        upd as (
          update workspaces w
             set credits_used = ${spentThisMonth} + ${credits}, credits_month = ${MONTH}
           where w.id = ${workspaceId} and not exists (select 1 from prior)
             and (${charge.monthlyCredits}::int is null or ${spentThisMonth} + ${credits} <= ${charge.monthlyCredits}::int)
          returning w.id
        ),
        ins as (
          insert into usage (workspace_id, execution_id, source, credits)
          select ${workspaceId}, ${executionId}, ${source}, ${credits} from upd
          on conflict (execution_id, source) do nothing
          returning 1
        )
        select exists (select 1 from prior) as prior, (select count(*) from upd)::int as charged,
               (select count(*) from ins)::int as recorded`,
  );
  if (row?.prior) return { ok: true, charged: false };
  if (row?.charged === 1) return { ok: true, charged: true };
  return { ok: false, reason: "exhausted" };
}

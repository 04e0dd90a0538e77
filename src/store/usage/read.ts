import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { Plan } from "@/domain/statuses";
import { asCredits, MONTH, usedThisMonthMilli } from "./amounts";

export interface UsageSummary {
  plan: Plan;
  month: string;
  /** Charged this month. */
  used: number;
  /** Set aside for paid calls in flight (charged when their answers are recorded, else given back). */
  reserved: number;
  bySource: { source: string; credits: number }[];
}

/**
 * What a charge shows under: an llm call's key, `llm:<model>@<blockId>` (`#repair` after a
 * schema-repair call), by its model, whatever block or call it was (block ids match
 * `^[a-z][a-z0-9_]*$`, so a model name with an `@` of its own keeps it); enrichment keys as
 * they are (`<enrichmentId>`, `<enrichmentId>@<blockId>`).
 */
const bySource = sql.raw(
  `(case when source like 'llm:%' then regexp_replace(source, '@[a-z][a-z0-9_]*(#repair)?$', '') else source end)`,
);

/** This UTC month's credits of a workspace: charged in total and by source, and reserved now. */
export async function usageSummary(db: Db, workspaceId: string): Promise<UsageSummary | null> {
  const [row] = await queryRows<UsageSummary>(
    db,
    sql`select w.plan, to_char(${MONTH}, 'YYYY-MM') as month,
               ${asCredits(usedThisMonthMilli)} as used, ${asCredits(sql`w.reserved_milli`)} as reserved,
               coalesce((select jsonb_agg(jsonb_build_object('source', source, 'credits', credits) order by source)
                           from (select ${bySource} as source, ${asCredits(sql`sum(milli)`)} as credits from usage
                                  where workspace_id = w.id and state = 'charged'
                                    and charged_at >= ${MONTH}::timestamp at time zone 'utc'
                                  group by 1) s), '[]'::jsonb) as "bySource"
          from workspaces w where w.id = ${workspaceId}`,
  );
  return row ?? null;
}

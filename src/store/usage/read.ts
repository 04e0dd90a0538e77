import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { Plan } from "@/domain/statuses";

export interface UsageSummary {
  plan: Plan;
  month: string;
  used: number;
  bySource: { source: string; credits: number }[];
}

/** This UTC month's credits of a workspace, in total and by source. */
export async function usageSummary(db: Db, workspaceId: string): Promise<UsageSummary | null> {
  const [row] = await queryRows<UsageSummary>(
    db,
    sql`select w.plan, to_char(date_trunc('month', now() at time zone 'utc'), 'YYYY-MM') as month,
               (case when w.credits_month = date_trunc('month', now() at time zone 'utc')::date
                     then w.credits_used else 0 end) as used,
               coalesce((select jsonb_agg(jsonb_build_object('source', source, 'credits', credits) order by source)
                           from (select source, sum(credits)::int as credits from usage
                                  where workspace_id = w.id
                                    and created_at >= date_trunc('month', now() at time zone 'utc') at time zone 'utc'
                                  group by source) s), '[]'::jsonb) as "bySource"
          from workspaces w where w.id = ${workspaceId}`,
  );
  return row ?? null;
}

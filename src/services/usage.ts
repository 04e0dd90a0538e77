/** The workspace's credit usage this month, and its plan's limits. */
import type { UsageView } from "@/contracts/workspaces";
import { type Failure, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { planLimits } from "@/limits/plans";
import { usageSummary } from "@/store/usage/read";
import type { ServiceContext } from "./context";

export async function getUsage(ctx: ServiceContext): Promise<Result<UsageView, Failure>> {
  const summary = await usageSummary(ctx.db, ctx.workspaceId);
  if (!summary) return { ok: false, reason: notFound("workspace") };
  const plan = planLimits(summary.plan);
  const limit = plan.monthlyCredits;
  return {
    ok: true,
    value: {
      ...summary,
      limit,
      remaining:
        limit === null
          ? null
          : Math.max(0, Math.round((limit - summary.used - summary.reserved) * 1000) / 1000),
      limits: { rowsPerTable: plan.rowsPerTable },
    },
  };
}

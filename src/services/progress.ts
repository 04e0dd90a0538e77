import type { TableProgress } from "@/contracts/progress";
import { type Failure, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { readProgress } from "@/store/progress/read";
import type { ServiceContext } from "./context";

/** The table's cells per group by status and outcome, off its counters (no full count). */
export async function getProgress(
  ctx: ServiceContext,
  tableId: string,
): Promise<Result<TableProgress, Failure>> {
  const progress = await readProgress(ctx.db, { workspaceId: ctx.workspaceId, tableId });
  return progress ? { ok: true, value: progress } : { ok: false, reason: notFound("table") };
}

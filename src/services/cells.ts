/** Per-cell actions: reading a cell and its attempt history, resuming a paused cell. */
import { carrierSpec } from "@/backends/port";
import type {
  CellAttemptsResponse,
  CellWithDetails,
  ResumeCellRequest,
  ResumeCellResponse,
} from "@/contracts/cells";
import { TableSchema } from "@/contracts/table";
import { conflict, type Failure, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { readCellAttempts } from "@/store/cells/attempts";
import { readCell } from "@/store/cells/read-cell";
import { resumeCell } from "@/store/cells/resume";
import { tableForEngine } from "@/store/engine-reads";
import type { ServiceContext } from "./context";

export async function resumePausedCell(
  ctx: ServiceContext,
  ref: { tableId: string; rowId: string; groupId: string },
  req: ResumeCellRequest,
): Promise<Result<ResumeCellResponse, Failure>> {
  const table = await tableForEngine(ctx.db, ref.tableId);
  if (!table || table.workspaceId !== ctx.workspaceId)
    return { ok: false, reason: notFound("table") };
  const resumed = await resumeCell(ctx.db, {
    ...ref,
    executionId: req.executionId,
    data: { approval: req.data ?? null },
  });
  if (!resumed.ok) {
    switch (resumed.reason) {
      case "not_found":
        return { ok: false, reason: notFound("cell") };
      case "not_paused":
        return {
          ok: false,
          reason: conflict(`the cell is ${resumed.status ?? "not paused"}, not paused`),
        };
      case "stale":
        return {
          ok: false,
          reason: conflict("the execution id is not the paused attempt's (stale or wrong)"),
        };
    }
  }
  // Committed first, then the carrier: it finds the cell queued.
  await ctx.backend.enqueue([carrierSpec({ tableId: ref.tableId, rowId: ref.rowId })]);
  ctx.log.info({ ...ref, executionId: req.executionId }, "paused cell resumed");
  return { ok: true, value: { status: "queued", executionId: req.executionId } };
}

type CellAddress = { tableId: string; rowId: string; groupId: string };

/** The table is the key's and has the group (404 otherwise: no existence leak). */
async function groupOf(ctx: ServiceContext, ref: CellAddress): Promise<Failure | null> {
  const table = await tableForEngine(ctx.db, ref.tableId);
  if (!table || table.workspaceId !== ctx.workspaceId) return notFound("table");
  if (!TableSchema.parse(table.schema).groups.some((g) => g.id === ref.groupId))
    return notFound("group");
  return null;
}

/** The cell's attempts, newest first (404 for a table, row or group the key cannot see). */
export async function listCellAttempts(
  ctx: ServiceContext,
  ref: CellAddress,
): Promise<Result<CellAttemptsResponse, Failure>> {
  const missing = await groupOf(ctx, ref);
  if (missing) return { ok: false, reason: missing };
  const attempts = await readCellAttempts(ctx.db, ref);
  return attempts ? { ok: true, value: { attempts } } : { ok: false, reason: notFound("row") };
}

/** One cell with its details (404 also for a cell never requested, or cleared). */
export async function getCell(
  ctx: ServiceContext,
  ref: CellAddress,
): Promise<Result<CellWithDetails, Failure>> {
  const missing = await groupOf(ctx, ref);
  if (missing) return { ok: false, reason: missing };
  const cell = await readCell(ctx.db, ref);
  return cell ? { ok: true, value: cell } : { ok: false, reason: notFound("cell") };
}

import type { CancelRunsRequest, CreateRunRequest } from "../contracts/runs";
import { TableSchema } from "../contracts/table";
import { type Failure, invalid, notFound } from "../domain/errors";
import type { Result } from "../domain/result";
import { startRun } from "../engine/dispatcher";
import { stopRuns } from "../engine/stop";
import { planLimits } from "../limits/plans";
import { type DispatchView, getDispatch, listDispatches } from "../store/dispatches/read";
import { tableForEngine } from "../store/engine-reads";
import type { ServiceContext } from "./context";

type RunContext = ServiceContext;

export async function ownTable(ctx: ServiceContext, tableId: string) {
  const table = await tableForEngine(ctx.db, tableId);
  return table && table.workspaceId === ctx.workspaceId ? table : null;
}

/** The groups a run request names (all of the table's by default), each one known. */
export function runGroups(
  schema: TableSchema,
  req: Pick<CreateRunRequest, "groupIds">,
): Result<string[], Failure> {
  const known = new Set(schema.groups.map((g) => g.id));
  const unknown = (req.groupIds ?? []).filter((g) => !known.has(g));
  if (unknown.length > 0) {
    return {
      ok: false,
      reason: invalid(unknown.map((g) => ({ path: "groupIds", message: `unknown group "${g}"` }))),
    };
  }
  const groupIds = req.groupIds ?? schema.groups.map((g) => g.id);
  if (groupIds.length === 0) {
    return {
      ok: false,
      reason: invalid([{ path: "groupIds", message: "the table has no groups to run" }]),
    };
  }
  return { ok: true, value: groupIds };
}

export async function createRun(
  ctx: RunContext,
  tableId: string,
  req: CreateRunRequest,
): Promise<Result<{ dispatchId: string; stamped: number }, Failure>> {
  // A dry run reaching here (a `run` hook's body) must not start the real thing.
  if (req.dryRun) {
    return {
      ok: false,
      reason: invalid([{ path: "dryRun", message: "a dry run is answered by POST /runs only" }]),
    };
  }
  const table = await ownTable(ctx, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const scoped = runGroups(TableSchema.parse(table.schema), req);
  if (!scoped.ok) return scoped;
  const groupIds = scoped.value;
  const planWindow = planLimits(table.plan).window;
  const window = Math.min(req.window ?? planWindow, planWindow);
  const run = await startRun(ctx.db, ctx.backend, {
    tableId,
    groupIds,
    mode: req.mode,
    rowIds: req.rowIds ?? null,
    limit: req.limit ?? null,
    window,
    ...(req.resume ? { resume: true } : {}),
  });
  ctx.log.info(
    { tableId, dispatchId: run.dispatchId, stamped: run.stamped, mode: req.mode },
    "run started",
  );
  return { ok: true, value: run };
}

export async function getRun(
  ctx: ServiceContext,
  tableId: string,
  id: string,
): Promise<Result<DispatchView, Failure>> {
  if (!(await ownTable(ctx, tableId))) return { ok: false, reason: notFound("table") };
  const run = await getDispatch(ctx.db, tableId, id);
  return run ? { ok: true, value: run } : { ok: false, reason: notFound("run") };
}

export async function listRuns(
  ctx: ServiceContext,
  tableId: string,
): Promise<Result<{ runs: DispatchView[] }, Failure>> {
  if (!(await ownTable(ctx, tableId))) return { ok: false, reason: notFound("table") };
  return { ok: true, value: { runs: await listDispatches(ctx.db, tableId) } };
}

export async function cancelRuns(
  ctx: RunContext,
  tableId: string,
  req: CancelRunsRequest,
): Promise<Result<{ cancelled: number }, Failure>> {
  if (!(await ownTable(ctx, tableId))) return { ok: false, reason: notFound("table") };
  const result = await stopRuns(ctx.db, ctx.backend, { tableId, ...req });
  ctx.log.info({ tableId, ...req, cancelled: result.cancelled }, "stop");
  return { ok: true, value: result };
}

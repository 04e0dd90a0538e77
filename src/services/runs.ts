import type {
  CancelRunsRequest,
  CreateRunRequest,
  RunList,
  RunStarted,
  RunsCancelled,
  RunView,
} from "@/contracts/runs";
import { TableSchema } from "@/contracts/table";
import { type Failure, invalid, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { checkWhere, type TypedCondition } from "@/domain/where";
import { startRun } from "@/engine/dispatcher";
import { stopRuns } from "@/engine/stop";
import { planLimits } from "@/limits/plans";
import { getDispatch, listDispatches } from "@/store/dispatches/read";
import { tableForEngine } from "@/store/engine-reads";
import type { ServiceContext } from "./context";

type RunContext = ServiceContext;

export async function ownTable(ctx: ServiceContext, tableId: string) {
  const table = await tableForEngine(ctx.db, tableId);
  return table && table.workspaceId === ctx.workspaceId ? table : null;
}

/** What a run request scopes besides its mode: its groups and its checked row filter. */
export function runScope(
  schema: TableSchema,
  req: Pick<CreateRunRequest, "groupIds" | "where">,
): Result<{ groupIds: string[]; where: TypedCondition[] | null }, Failure> {
  const groups = runGroups(schema, req);
  if (!groups.ok) return groups;
  if (!req.where) return { ok: true, value: { groupIds: groups.value, where: null } };
  const where = checkWhere(schema, req.where);
  return where.ok ? { ok: true, value: { groupIds: groups.value, where: where.value } } : where;
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
): Promise<Result<RunStarted, Failure>> {
  // A dry run reaching here (a `run` hook's body) must not start the real thing.
  if (req.dryRun) {
    return {
      ok: false,
      reason: invalid([{ path: "dryRun", message: "a dry run is answered by POST /runs only" }]),
    };
  }
  const table = await ownTable(ctx, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const scoped = runScope(TableSchema.parse(table.schema), req);
  if (!scoped.ok) return scoped;
  const { groupIds, where } = scoped.value;
  const planWindow = planLimits(table.plan).window;
  const window = Math.min(req.window ?? planWindow, planWindow);
  const run = await startRun(ctx.db, ctx.backend, {
    tableId,
    groupIds,
    mode: req.mode,
    rowIds: req.rowIds ?? null,
    where,
    limit: req.limit ?? null,
    window,
    maxCredits: req.maxCredits ?? null,
    ...(req.resume ? { resume: true } : {}),
  });
  ctx.log.info(
    {
      tableId,
      dispatchId: run.dispatchId,
      stamped: run.stamped,
      mode: req.mode,
      maxCredits: req.maxCredits,
    },
    "run started",
  );
  return { ok: true, value: run };
}

export async function getRun(
  ctx: ServiceContext,
  tableId: string,
  id: string,
): Promise<Result<RunView, Failure>> {
  if (!(await ownTable(ctx, tableId))) return { ok: false, reason: notFound("table") };
  const run = await getDispatch(ctx.db, tableId, id);
  return run ? { ok: true, value: run } : { ok: false, reason: notFound("run") };
}

export async function listRuns(
  ctx: ServiceContext,
  tableId: string,
): Promise<Result<RunList, Failure>> {
  if (!(await ownTable(ctx, tableId))) return { ok: false, reason: notFound("table") };
  return { ok: true, value: { runs: await listDispatches(ctx.db, tableId) } };
}

export async function cancelRuns(
  ctx: RunContext,
  tableId: string,
  req: CancelRunsRequest,
): Promise<Result<RunsCancelled, Failure>> {
  const table = await ownTable(ctx, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const { where: rawWhere, ...scope } = req;
  const where = rawWhere ? checkWhere(TableSchema.parse(table.schema), rawWhere) : null;
  if (where && !where.ok) return where;
  const result = await stopRuns(ctx.db, ctx.backend, {
    tableId,
    ...scope,
    ...(where ? { where: where.value } : {}),
  });
  ctx.log.info({ tableId, ...req, cancelled: result.cancelled }, "stop");
  return { ok: true, value: result };
}

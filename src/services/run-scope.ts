/**
 * Which rows and groups a run request covers, read one way for a dry run
 * (run-estimate.ts) and a real one (runs.ts). Invariant: both get the same scope from the
 * same request, so a run started right after its estimate, on a table nobody changed,
 * stamps exactly what the estimate counted.
 */
import type { CreateRunRequest } from "@/contracts/runs";
import { TableSchema } from "@/contracts/table";
import { type Failure, invalid } from "@/domain/errors";
import type { Result } from "@/domain/result";
import type { RunMode } from "@/domain/statuses";
import { checkWhere, type TypedCondition } from "@/domain/where";
import type { RunScope } from "@/engine/dispatcher";
import { planLimits } from "@/limits/plans";
import { type EngineTable, tableForEngine } from "@/store/engine-reads";
import type { ServiceContext } from "./context";

/** The table, if it is the caller's workspace's. */
export async function ownTable(ctx: ServiceContext, tableId: string) {
  const table = await tableForEngine(ctx.db, tableId);
  return table && table.workspaceId === ctx.workspaceId ? table : null;
}

/** What a run request covers: its groups (each one known), mode, rows, checked filter, limit. */
export interface RequestScope {
  tableId: string;
  groupIds: string[];
  mode: RunMode;
  rowIds: string[] | null;
  where: TypedCondition[] | null;
  limit: number | null;
  /** Mode `stale`'s hours (null otherwise). */
  staleAfterHours: number | null;
  /** Mode `stale`'s cut-off as a count reads it: that many hours before now. */
  stale?: { hours: number; asOf: null };
}

/** The request's scope against the table's schema (returned too, parsed). */
export function readRunScope(
  table: { schema: unknown },
  tableId: string,
  req: CreateRunRequest,
): Result<{ schema: TableSchema; scope: RequestScope }, Failure> {
  const schema = TableSchema.parse(table.schema);
  const groupIds = runGroups(schema, req);
  if (!groupIds.ok) return groupIds;
  const where = req.where ? checkWhere(schema, req.where) : null;
  if (where && !where.ok) return where;
  return {
    ok: true,
    value: {
      schema,
      scope: {
        tableId,
        groupIds: groupIds.value,
        mode: req.mode,
        rowIds: req.rowIds ?? null,
        where: where ? where.value : null,
        limit: req.limit ?? null,
        staleAfterHours: req.staleAfterHours ?? null,
        ...(req.staleAfterHours === undefined
          ? {}
          : { stale: { hours: req.staleAfterHours, asOf: null } }),
      },
    },
  };
}

/** The groups a run request names (all of the table's by default), each one known. */
function runGroups(
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

/**
 * What a real run of the request covers and how it runs: its scope, its window (the
 * request's, held to the plan's), its credit caps and resume. A Run request and a
 * schedule's due time start their runs from this one reading.
 */
export function startScope(
  table: Pick<EngineTable, "schema" | "plan">,
  tableId: string,
  req: CreateRunRequest,
): Result<RunScope, Failure> {
  const scoped = readRunScope(table, tableId, req);
  if (!scoped.ok) return scoped;
  const planWindow = planLimits(table.plan).window;
  return {
    ok: true,
    value: {
      ...scoped.value.scope,
      window: Math.min(req.window ?? planWindow, planWindow),
      maxCredits: req.maxCredits ?? null,
      maxCreditsPerRow: req.maxCreditsPerRow ?? null,
      ...(req.resume ? { resume: true } : {}),
    },
  };
}

import type {
  CancelRunsRequest,
  CreateRunRequest,
  RunList,
  RunStarted,
  RunsCancelled,
  RunView,
} from "@/contracts/runs";
import { TableSchema } from "@/contracts/table";
import { digestOf } from "@/domain/digest";
import { conflict, type Failure, invalid, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { checkWhere } from "@/domain/where";
import { startKeyedRun, startRun } from "@/engine/dispatcher";
import { stopRuns } from "@/engine/stop";
import { getDispatch, listDispatches } from "@/store/dispatches/read";
import { findRunKey, type SeenRunKey } from "@/store/run-keys/find";
import type { ServiceContext } from "./context";
import { ownTable, startScope } from "./run-scope";

type RunContext = ServiceContext;

/** A started run, and whether it is the answer to a repeat of its `Idempotency-Key`. */
export interface RunAnswer {
  run: RunStarted;
  replayed: boolean;
}

/**
 * Starts a run. With an `Idempotency-Key` (per table, honoured 24 h), a request whose key
 * started a run before gets that run back (as it stands now), whatever happened to the
 * first request after the run was created; the key with another request is a conflict.
 * "The same request" is the same parsed request (digestOf), not the same bytes.
 */
export async function createRun(
  ctx: RunContext,
  tableId: string,
  req: CreateRunRequest,
  idempotencyKey: string | null = null,
): Promise<Result<RunAnswer, Failure>> {
  // A dry run reaching here (a `run` hook's body) must not start the real thing.
  if (req.dryRun) {
    return {
      ok: false,
      reason: invalid([{ path: "dryRun", message: "a dry run is answered by POST /runs only" }]),
    };
  }
  const table = await ownTable(ctx, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const key = idempotencyKey === null ? null : { tableId, key: idempotencyKey };
  const digest = digestOf({ ...req, dryRun: undefined });
  // Only an early answer (a repeat whose table changed since still gets its run): the
  // key's primary key, not this read, decides between two requests (startKeyedRun).
  const seen = key ? await findRunKey(ctx.db, key) : null;
  if (seen) return answerSeen(ctx, tableId, seen, digest);
  const scoped = startScope(table, tableId, req);
  if (!scoped.ok) return scoped;
  const scope = scoped.value;
  let run: RunStarted;
  if (key) {
    const keyed = await startKeyedRun(ctx, { scope, key: { ...key, requestDigest: digest } });
    if (keyed.kind === "seen") return answerSeen(ctx, tableId, keyed.seen, digest);
    run = keyed.run;
  } else {
    run = await startRun(ctx, scope);
  }
  ctx.log.info(
    {
      tableId,
      dispatchId: run.dispatchId,
      stamped: run.stamped,
      mode: req.mode,
      maxCredits: req.maxCredits,
      maxCreditsPerRow: req.maxCreditsPerRow,
      ...(key ? { idempotencyKey: key.key } : {}),
    },
    "run started",
  );
  return { ok: true, value: { run, replayed: false } };
}

/** The answer to a key used before: its run, or a conflict when the request differs. */
function answerSeen(
  ctx: RunContext,
  tableId: string,
  seen: SeenRunKey,
  digest: string,
): Result<RunAnswer, Failure> {
  if (seen.requestDigest !== digest) {
    ctx.log.info(
      { tableId, dispatchId: seen.dispatchId },
      "idempotency key reused for another run",
    );
    return {
      ok: false,
      reason: conflict(
        "This Idempotency-Key already started a run on this table with another request; use a new key for a different run",
      ),
    };
  }
  ctx.log.info({ tableId, dispatchId: seen.dispatchId }, "run request repeated: its run answered");
  const { dispatchId, stamped, stamping } = seen;
  return { ok: true, value: { run: { dispatchId, stamped, stamping }, replayed: true } };
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
  const result = await stopRuns(ctx, {
    tableId,
    ...scope,
    ...(where ? { where: where.value } : {}),
  });
  ctx.log.info({ tableId, ...req, cancelled: result.cancelled }, "stop");
  return { ok: true, value: result };
}

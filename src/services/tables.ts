import type { Issue } from "@/contracts/common";
import {
  type CreateTableRequest,
  type PatchedTable,
  type PatchTableRequest,
  type TableList,
  TableSchema,
  type TableView,
  type WaterfallGroup,
} from "@/contracts/table";
import { WorkflowDefinition } from "@/contracts/workflow";
import { conflict, type Failure, invalid, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { checkTableSchema } from "@/domain/table-schema";
import { canPause } from "@/domain/waterfall";
import { autoFire, backfillAutoRun } from "@/engine/auto-run";
import { abortLocal, publishCancel } from "@/engine/cancellation";
import { wakeRunCancelDrainers } from "@/engine/run-cancel-loop";
import { ENRICHMENT_IDS } from "@/enrichments/catalog";
import { childWorkflow } from "@/store/engine-reads";
import { setAutoRun } from "@/store/tables/auto-run-switch";
import { createTable as insertTable } from "@/store/tables/create";
import { deleteTable as removeTable } from "@/store/tables/delete";
import {
  getTable as readTable,
  listTables as readTables,
  type TableRecord,
} from "@/store/tables/read";
import { setRowBudget } from "@/store/tables/row-budget";
import { updateTable } from "@/store/tables/update";
import { existingWorkflowIds } from "@/store/workflows/read";
import type { ServiceContext } from "./context";
import { retireRowIndexes } from "./row-indexes";
import { cancelRuns } from "./runs";

function view(r: TableRecord): TableView {
  const schema = TableSchema.parse(r.schema);
  return {
    id: r.id,
    name: r.name,
    columns: schema.columns,
    groups: schema.groups,
    rowCount: r.rowCount,
    schemaVersion: r.schemaVersion,
    autoRun: r.autoRun,
    maxCreditsPerRow: r.maxCreditsPerRowMilli === null ? null : r.maxCreditsPerRowMilli / 1000,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

async function schemaIssues(ctx: ServiceContext, schema: TableSchema): Promise<Issue[]> {
  const issues = checkTableSchema(schema, ENRICHMENT_IDS);
  const wanted = schema.groups.flatMap((g) =>
    g.kind === "workflow"
      ? [g.workflowId]
      : g.kind === "waterfall"
        ? g.steps.flatMap((s) => ("workflowId" in s ? [s.workflowId] : []))
        : [],
  );
  const known = await existingWorkflowIds(ctx.db, ctx.workspaceId, wanted);
  for (const [i, g] of schema.groups.entries()) {
    if (g.kind === "workflow" && !known.has(g.workflowId)) {
      issues.push({
        path: `groups.${i}.workflowId`,
        message: `unknown workflow "${g.workflowId}"`,
      });
    }
    if (g.kind === "waterfall") issues.push(...(await stepWorkflowIssues(ctx, g, i, known)));
  }
  return issues;
}

/**
 * A waterfall's workflow steps: known, and unable to pause (a step has no way to wait for
 * an approval or a long wait; the engine fails the cell if a workflow gains one later).
 */
async function stepWorkflowIssues(
  ctx: ServiceContext,
  g: WaterfallGroup,
  i: number,
  known: ReadonlySet<string>,
): Promise<Issue[]> {
  const issues: Issue[] = [];
  for (const [j, step] of g.steps.entries()) {
    if (!("workflowId" in step)) continue;
    const path = `groups.${i}.steps.${j}.workflowId`;
    if (!known.has(step.workflowId)) {
      issues.push({ path, message: `unknown workflow "${step.workflowId}"` });
      continue;
    }
    const raw = await childWorkflow(ctx.db, ctx.workspaceId, step.workflowId, step.version);
    const parsed = raw === null ? null : WorkflowDefinition.safeParse(raw);
    if (parsed?.success && canPause(parsed.data))
      issues.push({
        path,
        message: `workflow "${step.workflowId}" has an approval or wait block; a waterfall step cannot pause`,
      });
  }
  return issues;
}

export async function createTable(
  ctx: ServiceContext,
  req: CreateTableRequest,
): Promise<Result<TableView, Failure>> {
  const schema: TableSchema = { columns: req.columns, groups: req.groups };
  const issues = await schemaIssues(ctx, schema);
  if (issues.length > 0)
    return { ok: false, reason: invalid(issues, "The table schema is not valid") };
  const row = await insertTable(ctx.db, ctx.workspaceId, { name: req.name, schema });
  ctx.log.info({ tableId: row.id }, "table created");
  return { ok: true, value: view(row) };
}

export async function getTable(
  ctx: ServiceContext,
  id: string,
): Promise<Result<TableView, Failure>> {
  const row = await readTable(ctx.db, ctx.workspaceId, id);
  if (!row) return { ok: false, reason: notFound("table") };
  return { ok: true, value: view(row) };
}

export async function listTables(ctx: ServiceContext): Promise<Result<TableList, Failure>> {
  const rows = await readTables(ctx.db, ctx.workspaceId);
  return { ok: true, value: { tables: rows.map(view) } };
}

const PATCH_ATTEMPTS = 3;

/**
 * A table's name, lists, auto-run switch and default per-row budget. The budget is set
 * first (the runs the patch starts, a backfill or a group it arms, take it); the switch
 * goes off before the lists change (a group they add to auto-run then fires nothing) and
 * on after them (its backfill run covers the groups they add); `backfill: "run"` answers
 * its run's `dispatchId`.
 */
export async function patchTable(
  ctx: ServiceContext,
  id: string,
  req: PatchTableRequest,
): Promise<Result<PatchedTable, Failure>> {
  const { autoRun, backfill, maxCreditsPerRow, ...edit } = req;
  if (
    maxCreditsPerRow !== undefined &&
    !(await setRowBudget(ctx.db, { ...scope(ctx, id), credits: maxCreditsPerRow }))
  )
    return { ok: false, reason: notFound("table") };
  if (autoRun === false && !(await setAutoRun(ctx.db, { ...scope(ctx, id), on: false })))
    return { ok: false, reason: notFound("table") };
  const hasEdit =
    edit.name !== undefined || edit.columns !== undefined || edit.groups !== undefined;
  const edited = hasEdit ? await editTable(ctx, id, edit) : await getTable(ctx, id);
  if (!edited.ok || autoRun !== true) return edited;
  const on = await setAutoRun(ctx.db, { ...scope(ctx, id), on: true });
  if (!on) return { ok: false, reason: notFound("table") };
  const run = backfill === "run" ? await backfillAutoRun(ctx, { tableId: id }) : null;
  ctx.log.info({ tableId: id, backfill, dispatchId: run?.dispatchId }, "table auto-run on");
  return { ok: true, value: { ...edited.value, autoRun: true, ...(run ?? {}) } };
}

function scope(ctx: ServiceContext, tableId: string): { workspaceId: string; tableId: string } {
  return { workspaceId: ctx.workspaceId, tableId };
}

async function editTable(
  ctx: ServiceContext,
  id: string,
  req: Pick<PatchTableRequest, "name" | "columns" | "groups">,
): Promise<Result<TableView, Failure>> {
  // Lists given replace the current ones; a concurrent edit makes the guarded write miss,
  // and the patch is re-applied on the newer schema (it names whole lists, so it is safe).
  for (let attempt = 0; attempt < PATCH_ATTEMPTS; attempt++) {
    const current = await readTable(ctx.db, ctx.workspaceId, id);
    if (!current) return { ok: false, reason: notFound("table") };
    const before = TableSchema.parse(current.schema);
    const schema: TableSchema = {
      columns: req.columns ?? before.columns,
      groups: req.groups ?? before.groups,
    };
    const issues = await schemaIssues(ctx, schema);
    if (issues.length > 0)
      return { ok: false, reason: invalid(issues, "The table schema is not valid") };
    const written = await updateTable(ctx.db, {
      workspaceId: ctx.workspaceId,
      tableId: id,
      expectedVersion: current.schemaVersion,
      next: { name: req.name ?? current.name, schema },
    });
    if (written.ok) {
      // A column deleted or retyped: its row indexes are dropped in the background.
      await retireRowIndexes(ctx, id);
      // Groups added with autoRun, or switched to it, run where their dependencies are met.
      const wasAuto = new Set(before.groups.filter((g) => g.autoRun).map((g) => g.id));
      const armed = new Set(
        schema.groups.filter((g) => g.autoRun && !wasAuto.has(g.id)).map((g) => g.id),
      );
      const fired =
        armed.size > 0 ? await autoFire(ctx, { tableId: id, rowIds: null, only: armed }) : null;
      ctx.log.info(
        { tableId: id, schemaVersion: written.value.schemaVersion, autoRun: fired },
        "table schema updated",
      );
      return { ok: true, value: view(written.value) };
    }
  }
  return {
    ok: false,
    reason: conflict("The table was changed by someone else meanwhile; try again"),
  };
}

/**
 * Stops everything in flight in the table (as `POST /runs/cancel` with an empty body
 * does), then deletes it with all it holds. A cell stamped between the two (auto-run)
 * goes with the table; an attempt of it already running is stopped here too.
 */
export async function deleteTable(ctx: ServiceContext, id: string): Promise<Result<null, Failure>> {
  const stopped = await cancelRuns(ctx, id, {});
  if (!stopped.ok) return stopped;
  const deleted = await removeTable(ctx.db, {
    workspaceId: ctx.workspaceId,
    tableId: id,
    outboxRunIds: ctx.backend.remoteCancel,
  });
  if (!deleted) return { ok: false, reason: notFound("table") };
  abortLocal(deleted.running);
  await publishCancel(ctx.db, deleted.running);
  await retireRowIndexes(ctx, id);
  if (deleted.runIds.length > 0 && ctx.backend.remoteCancel) wakeRunCancelDrainers();
  ctx.log.info(
    { tableId: id, stopped: stopped.value.cancelled, stillRunning: deleted.running.length },
    "table deleted",
  );
  return { ok: true, value: null };
}

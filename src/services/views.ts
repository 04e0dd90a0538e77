/**
 * Saved views: a table's named filter, sort and hidden columns, shared by its workspace.
 * A view is checked against the table when saved (unknown columns → 400) and again when
 * applied: a column deleted since then makes the view unusable (409 naming the column)
 * rather than silently dropping the condition and showing other rows than it names.
 */
import type { Issue } from "@/contracts/common";
import type { SortDirection } from "@/contracts/rows";
import { TableSchema } from "@/contracts/table";
import {
  type CreateViewRequest,
  MAX_VIEWS_PER_TABLE,
  type PatchViewRequest,
  SavedView,
  type ViewList,
} from "@/contracts/views";
import type { Where } from "@/contracts/where";
import { conflict, type Failure, invalid, notFound } from "@/domain/errors";
import { newId } from "@/domain/ids";
import type { Result } from "@/domain/result";
import { rowOrder } from "@/domain/row-order";
import { checkWhere } from "@/domain/where";
import { getTable } from "@/store/tables/read";
import { insertView } from "@/store/views/create";
import { deleteView as removeView } from "@/store/views/delete";
import { getView, listViews as readViews, type ViewRecord } from "@/store/views/read";
import { updateView as changeView } from "@/store/views/update";
import type { ServiceContext } from "./context";

function view(record: ViewRecord): SavedView {
  return SavedView.parse({
    ...record,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  });
}

async function tableSchema(ctx: ServiceContext, tableId: string): Promise<TableSchema | null> {
  const table = await getTable(ctx.db, ctx.workspaceId, tableId);
  return table ? TableSchema.parse(table.schema) : null;
}

interface ViewFields {
  where?: Where | null | undefined;
  orderBy?: string | null | undefined;
  hiddenColumns?: readonly string[] | undefined;
}

/** The fields' problems against the table as it is now: what saving a view refuses. */
function fieldIssues(schema: TableSchema, fields: ViewFields): Issue[] {
  const issues: Issue[] = [];
  if (fields.where) {
    const where = checkWhere(schema, fields.where);
    if (!where.ok && where.reason.code === "validation_failed") issues.push(...where.reason.issues);
  }
  if (fields.orderBy) {
    const order = rowOrder(schema, fields.orderBy, "asc");
    if (!order.ok && order.reason.code === "validation_failed") issues.push(...order.reason.issues);
  }
  const columns = new Set(schema.columns.map((c) => c.id));
  fields.hiddenColumns?.forEach((id, i) => {
    if (!columns.has(id))
      issues.push({ path: `hiddenColumns.${i}`, message: `unknown column "${id}"` });
  });
  return issues;
}

/** The first column or group a saved view names that the table no longer has. */
function missingName(schema: TableSchema, saved: SavedView): string | null {
  const columns = new Set(schema.columns.map((c) => c.id));
  const groups = new Set(schema.groups.map((g) => g.id));
  for (const cond of saved.where ?? []) {
    if ("group" in cond) {
      if (!groups.has(cond.group)) return `group "${cond.group}"`;
    } else if (!columns.has(cond.column)) return `column "${cond.column}"`;
  }
  if (saved.orderBy !== null && !columns.has(saved.orderBy)) return `column "${saved.orderBy}"`;
  const hidden = saved.hiddenColumns.find((id) => !columns.has(id));
  return hidden === undefined ? null : `column "${hidden}"`;
}

/**
 * What keeps a saved `where` (whose columns all exist) from applying: a column whose type
 * changed since no longer takes its operator or value (a number column turned text keeps
 * no `gt`; a select column lost the option). Names the column by id as the 409 for a
 * deleted one does, with the check's own reason.
 */
function whereMisfit(schema: TableSchema, where: Where): string | null {
  const checked = checkWhere(schema, where);
  if (checked.ok || checked.reason.code !== "validation_failed") return null;
  const issue = checked.reason.issues[0];
  if (!issue) return null;
  const cond = where[Number(issue.path.split(".")[1])];
  const named = cond && "column" in cond ? `column "${cond.column}"` : "a condition";
  return `names ${named}, whose condition no longer fits the table: ${issue.message}`;
}

export async function createView(
  ctx: ServiceContext,
  tableId: string,
  req: CreateViewRequest,
): Promise<Result<SavedView, Failure>> {
  const schema = await tableSchema(ctx, tableId);
  if (!schema) return { ok: false, reason: notFound("table") };
  const issues = fieldIssues(schema, req);
  if (issues.length > 0) return { ok: false, reason: invalid(issues) };
  const created = await insertView(ctx.db, {
    id: newId("view"),
    workspaceId: ctx.workspaceId,
    tableId,
    name: req.name,
    where: req.where ?? null,
    orderBy: req.orderBy ?? null,
    dir: req.dir,
    hiddenColumns: req.hiddenColumns,
  });
  if (!created.ok)
    return {
      ok: false,
      reason:
        created.reason === "table_not_found"
          ? notFound("table")
          : // 409, not the plan caps' 402: no plan lifts it; deleting a view makes room.
            conflict(`a table has at most ${MAX_VIEWS_PER_TABLE} views`),
    };
  ctx.log.info({ tableId, viewId: created.view.id }, "view created");
  return { ok: true, value: view(created.view) };
}

export async function listViews(
  ctx: ServiceContext,
  tableId: string,
): Promise<Result<ViewList, Failure>> {
  const table = await getTable(ctx.db, ctx.workspaceId, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const views = await readViews(ctx.db, ctx.workspaceId, tableId);
  return { ok: true, value: { views: views.map(view) } };
}

export async function patchView(
  ctx: ServiceContext,
  tableId: string,
  viewId: string,
  req: PatchViewRequest,
): Promise<Result<SavedView, Failure>> {
  const schema = await tableSchema(ctx, tableId);
  if (!schema) return { ok: false, reason: notFound("table") };
  const issues = fieldIssues(schema, req);
  if (issues.length > 0) return { ok: false, reason: invalid(issues) };
  const changed = await changeView(ctx.db, { workspaceId: ctx.workspaceId, tableId, viewId }, req);
  if (!changed) return { ok: false, reason: notFound("view") };
  ctx.log.info({ tableId, viewId }, "view edited");
  return { ok: true, value: view(changed) };
}

export async function deleteView(
  ctx: ServiceContext,
  tableId: string,
  viewId: string,
): Promise<Result<null, Failure>> {
  const table = await getTable(ctx.db, ctx.workspaceId, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  if (!(await removeView(ctx.db, { workspaceId: ctx.workspaceId, tableId, viewId })))
    return { ok: false, reason: notFound("view") };
  ctx.log.info({ tableId, viewId }, "view deleted");
  return { ok: true, value: null };
}

/** What `GET /rows?view=` reads with: the view's filter and order. */
export interface AppliedView {
  where: Where | null;
  orderBy: string | null;
  dir: SortDirection;
}

/**
 * A view of the table for `GET /rows`: not the workspace's, or not this table's → 404;
 * naming a column or group the table no longer has → 409 naming it.
 */
export async function viewToApply(
  ctx: ServiceContext,
  schema: TableSchema,
  tableId: string,
  viewId: string,
): Promise<Result<AppliedView, Failure>> {
  const record = await getView(ctx.db, { workspaceId: ctx.workspaceId, tableId, viewId });
  if (!record) return { ok: false, reason: notFound("view") };
  const saved = view(record);
  const missing = missingName(schema, saved);
  if (missing)
    return {
      ok: false,
      reason: conflict(`view "${saved.name}" names ${missing}, which the table no longer has`),
    };
  const misfit = saved.where ? whereMisfit(schema, saved.where) : null;
  if (misfit)
    return { ok: false, reason: conflict(`view "${saved.name}" ${misfit}; edit or delete it`) };
  return { ok: true, value: { where: saved.where, orderBy: saved.orderBy, dir: saved.dir } };
}

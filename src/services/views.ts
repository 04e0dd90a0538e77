/**
 * Saved views: a table's named filter, sort and hidden columns, shared by its workspace.
 * A view is checked against the table when saved (unknown columns → 400) and again when
 * applied: a column its filter or order names that was deleted since (or whose type no
 * longer takes its condition) makes the view unusable (409 naming the column) rather than
 * silently dropping the condition and showing other rows than it names. Its hidden columns
 * do not change the rows read, so one deleted since is ignored there. A view without an
 * order stores `dir` "asc": the direction of no order means nothing to the grid, so it
 * must not reverse the rows either.
 */
import type { Issue } from "@/contracts/common";
import type { SortDirection } from "@/contracts/rows";
import type { TableSchema } from "@/contracts/table";
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
import { tableSchema } from "./table-schema";

function view(record: ViewRecord): SavedView {
  return SavedView.parse({
    ...record,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  });
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

/**
 * Why a saved view no longer applies to the table as it is now, from its filter's and
 * order's first problem (the same checks as saving it): the column or group named by id,
 * as gone or, when its type changed since, with the check's reason. Null: it applies.
 */
function viewMisfit(schema: TableSchema, saved: SavedView): string | null {
  const issue = fieldIssues(schema, { where: saved.where, orderBy: saved.orderBy })[0];
  if (!issue) return null;
  const [field, index] = issue.path.split(".");
  const cond = field === "where" ? saved.where?.[Number(index)] : undefined;
  const named =
    field === "orderBy"
      ? `column "${saved.orderBy}"`
      : cond === undefined
        ? "a condition"
        : "group" in cond
          ? `group "${cond.group}"`
          : `column "${cond.column}"`;
  const gone = field === "orderBy" || /\.(column|group)$/.test(issue.path);
  return gone
    ? `names ${named}, which the table no longer has`
    : `names ${named}, whose condition no longer fits the table: ${issue.message}; edit or delete it`;
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
    dir: req.orderBy === undefined ? "asc" : req.dir,
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
 * a filter or order naming a column or group the table no longer has, or a condition its
 * column's type no longer takes → 409 naming it. Hidden columns are not checked: they do
 * not change the rows, and the grid drops one the table no longer has.
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
  const misfit = viewMisfit(schema, saved);
  if (misfit) return { ok: false, reason: conflict(`view "${saved.name}" ${misfit}`) };
  // A view stored before `dir` was normalized may hold "desc" without an order.
  const dir = saved.orderBy === null ? "asc" : saved.dir;
  return { ok: true, value: { where: saved.where, orderBy: saved.orderBy, dir } };
}

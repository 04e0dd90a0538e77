import type {
  InsertedRows,
  InsertRowsRequest,
  ListRowsQuery,
  PatchRowRequest,
  RowPage,
  RowView,
  SortDirection,
} from "@/contracts/rows";
import type { Where } from "@/contracts/where";
import { type Failure, invalid, notFound } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { decodeRowCursor, encodeRowCursor, rowOrder } from "@/domain/row-order";
import { assertNever } from "@/domain/statuses";
import { checkRowData } from "@/domain/values";
import { checkWhere } from "@/domain/where";
import { autoFire } from "@/engine/auto-run";
import { abortLocal, publishCancel } from "@/engine/cancellation";
import { editRow } from "@/engine/row-edit";
import { rowCaps } from "@/limits/plans";
import { countRows } from "@/store/rows/count";
import { deleteRow as removeRow } from "@/store/rows/delete";
import { findRows } from "@/store/rows/find";
import { insertRowsUnderCap } from "@/store/rows/insert";
import { getRow as readRow } from "@/store/rows/read";
import { getTable } from "@/store/tables/read";
import type { ServiceContext } from "./context";
import { rowCapReached } from "./row-cap";
import { indexesForRead } from "./row-indexes";
import { tableSchema } from "./table-schema";
import { type AppliedView, viewToApply } from "./views";

export async function insertRows(
  ctx: ServiceContext,
  tableId: string,
  req: InsertRowsRequest,
): Promise<Result<InsertedRows, Failure>> {
  const stored = await storeRows(ctx, tableId, req);
  if (!stored.ok) return stored;
  await fireStoredRows(ctx, tableId, stored.value);
  return { ok: true, value: { rows: stored.value } };
}

/**
 * The first half of `insertRows`: checks and stores the rows, firing nothing. Separate so
 * a caller can store them inside its own transaction (ctx.db a transaction) and fire
 * after that commits: carriers run on other connections and must see the rows. Rows that
 * would take the table past its plan's cap are refused whole (402 `limit_reached`).
 */
export async function storeRows(
  ctx: ServiceContext,
  tableId: string,
  req: InsertRowsRequest,
): Promise<Result<RowView[], Failure>> {
  const schema = await tableSchema(ctx, tableId);
  if (!schema) return { ok: false, reason: notFound("table") };
  const issues = req.rows.flatMap((r, i) => checkRowData(schema.columns, r.data, `rows.${i}.data`));
  if (issues.length > 0)
    return { ok: false, reason: invalid(issues, "Some values do not fit their columns") };
  const stored = await insertRowsUnderCap(
    ctx.db,
    tableId,
    req.rows.map((r) => r.data),
    rowCaps(),
  );
  switch (stored.kind) {
    case "inserted":
      return { ok: true, value: stored.rows };
    case "gone":
      return { ok: false, reason: notFound("table") };
    case "over_cap":
      return { ok: false, reason: rowCapReached(stored, req.rows.length) };
    default:
      return assertNever(stored);
  }
}

/** The second half of `insertRows`: auto-fires the eligible groups on committed rows. */
export async function fireStoredRows(
  ctx: ServiceContext,
  tableId: string,
  rows: readonly { id: string }[],
): Promise<void> {
  const fired = await autoFire(ctx, { tableId, rowIds: rows.map((r) => r.id) });
  ctx.log.info({ tableId, count: rows.length, autoRun: fired }, "rows inserted");
}

/**
 * A page of rows matching `where` in the requested order. The where is checked against
 * the table (domain/where.ts) and compiled with the runs' compiler, so "the rows a run
 * would take" and "the rows this lists" are the same rows.
 */
export async function listRows(
  ctx: ServiceContext,
  tableId: string,
  query: ListRowsQuery,
): Promise<Result<RowPage, Failure>> {
  const schema = await tableSchema(ctx, tableId);
  if (!schema) return { ok: false, reason: notFound("table") };
  // The caller's own where first, on its own: its issues' paths name its own conditions
  // (`where.0`), not their places after the view's in the combined where.
  const own = query.where ? checkWhere(schema, query.where) : null;
  if (own && !own.ok) return own;
  const applied = query.view ? await viewToApply(ctx, schema, tableId, query.view) : null;
  if (applied && !applied.ok) return applied;
  const read = withView(query, applied?.value ?? null);
  const where = read.where.length > 0 ? checkWhere(schema, read.where) : null;
  if (where && !where.ok) return where;
  const order = rowOrder(schema, read.orderBy, read.dir);
  if (!order.ok) return order;
  const places = [query.cursor, query.before, query.from, query.seek].filter(
    (p) => p !== undefined,
  );
  if (places.length > 1)
    return {
      ok: false,
      reason: invalid([{ path: "cursor", message: "give one of cursor, before, from and seek" }]),
    };
  let backward = query.before !== undefined || query.from === "end";
  const at = decodeRowCursor(query.before ?? query.cursor, order.value);
  if (!at.ok) return at;
  const conditions = where?.value ?? [];
  // A sort or filter on a big table records the indexes that would serve it (built in
  // the background); the read uses the order's index once it is ready.
  const ready = await indexesForRead(ctx, tableId, order.value, conditions);
  const find = {
    where: conditions,
    order: order.value,
    after: at.value,
    limit: query.limit + 1,
    indexedOrder: ready.order,
  };
  // A seek by rank needs the count first; otherwise the count (a scan under a filter)
  // and the page run side by side, each on its own connection.
  const rankSeek = query.seek !== undefined && order.value.column !== null;
  const counting =
    query.total || rankSeek ? countRows(ctx.db, tableId, conditions) : Promise.resolve(undefined);
  const total = rankSeek ? await counting : undefined;
  const seek =
    query.seek === undefined
      ? {}
      : {
          seek: {
            fraction: query.seek,
            rank: Math.min(query.seek * (total ?? 0), (total ?? 1) - 1),
          },
        };
  let [found, counted] = await Promise.all([
    findRows(ctx.db, tableId, { ...find, backward, ...seek }),
    counting,
  ]);
  // A position past the last row the filter matches: the seek lands on the last page.
  if (query.seek !== undefined && found.length === 0) {
    backward = true;
    found = await findRows(ctx.db, tableId, { ...find, backward });
  }
  // One more row than asked says whether the order goes on past the page's far end.
  const more = found.length > query.limit;
  const page = backward ? found.slice(-query.limit) : found.slice(0, query.limit);
  const cursorOf = (f: (typeof found)[number] | undefined) =>
    f ? encodeRowCursor(order.value, { key: f.key, position: f.row.position }) : null;
  // Forward, rows are before the page when it started after a cursor or at a seek;
  // backward, after it when it ended before a cursor.
  const rowsBefore = backward ? more : at.value !== null || query.seek !== undefined;
  const rowsAfter = backward ? at.value !== null : more;
  return {
    ok: true,
    value: {
      rows: page.map((f) => f.row),
      nextCursor: rowsAfter ? cursorOf(page.at(-1)) : null,
      prevCursor: rowsBefore ? cursorOf(page[0]) : null,
      ...(query.total ? { total: counted ?? 0 } : {}),
    },
  };
}

/**
 * A view's filter and order with the query's: a `where` given too must hold as well (the
 * view narrows, the query narrows further), and an explicit `orderBy` wins with its `dir`
 * (`dir` alone cannot: it has a default, so its absence is not seen here).
 */
function withView(
  query: ListRowsQuery,
  view: AppliedView | null,
): { where: Where; orderBy: string | undefined; dir: SortDirection } {
  const where = [...(view?.where ?? []), ...(query.where ?? [])];
  if (query.orderBy !== undefined || !view)
    return { where, orderBy: query.orderBy, dir: query.dir };
  return { where, orderBy: view.orderBy ?? undefined, dir: view.dir };
}

export async function getRow(
  ctx: ServiceContext,
  tableId: string,
  rowId: string,
): Promise<Result<RowView, Failure>> {
  const table = await getTable(ctx.db, ctx.workspaceId, tableId);
  const row = table ? await readRow(ctx.db, tableId, rowId) : null;
  return row ? { ok: true, value: row } : { ok: false, reason: notFound(table ? "row" : "table") };
}

export async function patchRow(
  ctx: ServiceContext,
  tableId: string,
  rowId: string,
  req: PatchRowRequest,
): Promise<Result<RowView, Failure>> {
  const schema = await tableSchema(ctx, tableId);
  if (!schema) return { ok: false, reason: notFound("table") };
  const issues = checkRowData(schema.columns, req.data, "data");
  if (issues.length > 0)
    return { ok: false, reason: invalid(issues, "Some values do not fit their columns") };
  const edited = await editRow(ctx, { tableId, rowId, data: req.data });
  if (edited) ctx.log.info({ tableId, rowId, autoRun: edited.autoRun }, "row edited");
  const row = edited ? await readRow(ctx.db, tableId, rowId) : null;
  return row ? { ok: true, value: row } : { ok: false, reason: notFound("row") };
}

export async function deleteRow(
  ctx: ServiceContext,
  tableId: string,
  rowId: string,
): Promise<Result<null, Failure>> {
  const table = await getTable(ctx.db, ctx.workspaceId, tableId);
  if (!table) return { ok: false, reason: notFound("table") };
  const deleted = await removeRow(ctx.db, { tableId, rowId });
  if (deleted) {
    // Its cells went with it; attempts still running stop now rather than at their next write.
    abortLocal(deleted.running);
    await publishCancel(ctx.db, deleted.running);
    ctx.log.info({ tableId, rowId }, "row deleted");
  }
  return deleted ? { ok: true, value: null } : { ok: false, reason: notFound("row") };
}

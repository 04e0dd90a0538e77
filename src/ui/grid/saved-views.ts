/**
 * Saved views in the grid, as plain data: a view opens as the filter bar's query (read
 * through `?view=` while it is unedited, so the server applies it and says when it no
 * longer fits the table), the filter bar saves as a view's fields, the picker marks the
 * open view edited once the bar differs from it, and the page's URL names the open view.
 */
import type { SavedView } from "@/contracts/views";
import type { RowQuery } from "./row-query";

/** What a view stores of the filter bar. */
export interface ViewFields {
  where: SavedView["where"];
  orderBy: string | null;
  dir: SavedView["dir"];
  hiddenColumns: string[];
}

/** The filter bar showing `view`, its rows read through it (again, when saved again). */
export function queryOfView(view: SavedView): RowQuery {
  return {
    where: view.where ?? [],
    sort: view.orderBy === null ? null : { columnId: view.orderBy, dir: view.dir },
    view: view.id,
    revision: view.updatedAt,
  };
}

/**
 * The URL's view, once its list is read, filled into the filter bar: only while the bar
 * still reads through it unedited (an edit made before the list came stays), and as the
 * same read as the first one (no revision: its rows are not read twice).
 */
export function urlViewFilled(current: RowQuery, view: SavedView): RowQuery {
  if (current.view !== view.id || current.revision !== undefined) return current;
  const { revision: _, ...filled } = queryOfView(view);
  return filled;
}

/** The URL's view's hidden columns, unless some were hidden or shown before its list came. */
export function urlHiddenFilled(current: string[], view: SavedView): string[] {
  return current.length === 0 ? view.hiddenColumns : current;
}

/** The URL named a view its list does not have: the bar reads all rows, not a missing view. */
export function urlViewMissing(current: RowQuery, viewId: string): RowQuery {
  return current.view === viewId ? edited(current) : current;
}

export const VIEW_NOT_FOUND =
  "The view in this link was not found (deleted, or another table's): showing all rows.";

/**
 * `view` as the grid can show it: hidden columns the table no longer has dropped (they
 * hide nothing, and the server ignores them too), so it does not read as edited for them
 * and its next Update drops them. Unchanged until the table is read.
 */
export function fittedView(view: SavedView, columns: readonly { id: string }[] | null): SavedView {
  if (!columns) return view;
  const hiddenColumns = knownHidden(view.hiddenColumns, columns);
  return hiddenColumns.length === view.hiddenColumns.length ? view : { ...view, hiddenColumns };
}

/** Hidden column ids the table has (all of them until the table is read). */
export function knownHidden(
  hidden: readonly string[],
  columns: readonly { id: string }[] | null,
): string[] {
  if (!columns) return [...hidden];
  return hidden.filter((id) => columns.some((c) => c.id === id));
}

/**
 * A state set from an answer that came after an await: `next` unless it changed since the
 * click (`atClick`), when the later change stays.
 */
export function settled<T>(current: T, atClick: T, next: T): T {
  return current === atClick ? next : current;
}

/** The filter bar (and its hidden columns) as a view's fields: a create's or a patch's body. */
export function viewFields(query: RowQuery, hidden: readonly string[]): ViewFields {
  return {
    where: query.where.length > 0 ? query.where : null,
    orderBy: query.sort?.columnId ?? null,
    dir: query.sort?.dir ?? "asc",
    hiddenColumns: [...hidden],
  };
}

/** A create's body: the API takes no empty `where` and no null `orderBy` there. */
export function createBody(name: string, fields: ViewFields) {
  return {
    name,
    ...(fields.where ? { where: fields.where } : {}),
    ...(fields.orderBy ? { orderBy: fields.orderBy } : {}),
    dir: fields.dir,
    hiddenColumns: fields.hiddenColumns,
  };
}

/** Whether the filter bar no longer shows `view` as saved (its conditions, sort or hidden columns). */
export function viewEdited(view: SavedView, query: RowQuery, hidden: readonly string[]): boolean {
  const now = viewFields(query, hidden);
  const saved: ViewFields = {
    where: view.where,
    orderBy: view.orderBy,
    // The direction of no sort is not a difference.
    dir: view.orderBy === null ? "asc" : view.dir,
    hiddenColumns: view.hiddenColumns,
  };
  const sameHidden =
    now.hiddenColumns.length === saved.hiddenColumns.length &&
    now.hiddenColumns.every((id) => saved.hiddenColumns.includes(id));
  return (
    JSON.stringify([now.where, now.orderBy, now.dir]) !==
      JSON.stringify([saved.where, saved.orderBy, saved.dir]) || !sameHidden
  );
}

/** The filter bar changed by hand: its rows are read by its own conditions, no longer the view's. */
export function edited(query: RowQuery): RowQuery {
  return { where: query.where, sort: query.sort };
}

/** `href` naming the open view in its `view` parameter (none: the parameter removed). */
export function urlWithView(href: string, viewId: string | null): string {
  const url = new URL(href);
  if (viewId) url.searchParams.set("view", viewId);
  else url.searchParams.delete("view");
  return url.toString();
}

/** The hidden columns with `columnId` hidden or shown again. */
export function toggleHidden(hidden: readonly string[], columnId: string): string[] {
  return hidden.includes(columnId) ? hidden.filter((id) => id !== columnId) : [...hidden, columnId];
}

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

/** The filter bar showing `view`, its rows read through it. */
export function queryOfView(view: SavedView): RowQuery {
  return {
    where: view.where ?? [],
    sort: view.orderBy === null ? null : { columnId: view.orderBy, dir: view.dir },
    view: view.id,
  };
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

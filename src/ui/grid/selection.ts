/**
 * The grid's selection: rows picked by id (a row's checkbox, or the header's: the rows
 * loaded), or every row the current filter matches (`matching`: "Select all N rows", the
 * rows beyond the window too, counted by the server). Invariant: an action on a
 * `matching` selection names the filter, never ids (a million rows are never listed), and
 * one on ids never sends more than a request takes (10,000 ids per call).
 */
import { MAX_ROWS_PER_DELETE } from "@/contracts/rows";
import type { WhereCondition } from "@/contracts/where";

export type Selection = { kind: "ids"; ids: ReadonlySet<string> } | { kind: "matching" };

export const NO_SELECTION: Selection = { kind: "ids", ids: new Set() };

export const idsSelection = (ids: Iterable<string>): Selection => ({
  kind: "ids",
  ids: new Set(ids),
});

export const isMatching = (s: Selection): s is { kind: "matching" } => s.kind === "matching";

/** Whether the row's checkbox is checked. */
export const isSelected = (s: Selection, rowId: string): boolean =>
  s.kind === "matching" || s.ids.has(rowId);

/** How many rows the selection holds; `total`: the rows the filter matches. */
export const selectedCount = (s: Selection, total: number): number =>
  s.kind === "matching" ? total : s.ids.size;

/** The ids picked, or null under `matching` (the rows are the filter's, not listed). */
export const pickedIds = (s: Selection): ReadonlySet<string> | null =>
  s.kind === "ids" ? s.ids : null;

/** Whether the header's checkbox shows checked: every loaded row picked, or all matching. */
export function allChecked(s: Selection, loaded: readonly string[]): boolean {
  if (s.kind === "matching") return true;
  return loaded.length > 0 && s.ids.size === loaded.length && loaded.every((id) => s.ids.has(id));
}

/** The header's checkbox: every loaded row, or none when all were checked. */
export const headerToggled = (s: Selection, loaded: readonly string[]): Selection =>
  allChecked(s, loaded) ? NO_SELECTION : idsSelection(loaded);

/**
 * A row's checkbox. Under `matching`, unchecking a row leaves the loaded rows but that
 * one picked (the rows beyond the window cannot be listed to keep them).
 */
export function rowToggled(s: Selection, rowId: string, loaded: readonly string[]): Selection {
  if (s.kind === "matching") return idsSelection(loaded.filter((id) => id !== rowId));
  const ids = new Set(s.ids);
  if (ids.has(rowId)) ids.delete(rowId);
  else ids.add(rowId);
  return { kind: "ids", ids };
}

/**
 * Whether to offer "Select all N rows": every loaded row is picked and the filter
 * matches more rows than are loaded.
 */
export const offersMatching = (s: Selection, loaded: readonly string[], total: number): boolean =>
  s.kind === "ids" && allChecked(s, loaded) && total > loaded.length;

/** What a run of the selection scopes to: its ids, or the filter (none: every row). */
export function runScope(
  s: Selection,
  where: readonly WhereCondition[],
): { rowIds: string[] } | { where: WhereCondition[] } | Record<string, never> {
  if (s.kind === "ids") return { rowIds: [...s.ids] };
  return where.length > 0 ? { where: [...where] } : {};
}

export type DeleteBody = { rowIds: string[] } | { where: WhereCondition[] } | { all: true };

/**
 * The bulk delete requests that remove the selection: its ids in chunks a request takes,
 * or one request naming the filter (no filter: every row, said outright).
 */
export function deleteBodies(s: Selection, where: readonly WhereCondition[]): DeleteBody[] {
  if (s.kind === "matching") return [where.length > 0 ? { where: [...where] } : { all: true }];
  const ids = [...s.ids];
  const bodies: DeleteBody[] = [];
  for (let i = 0; i < ids.length; i += MAX_ROWS_PER_DELETE)
    bodies.push({ rowIds: ids.slice(i, i + MAX_ROWS_PER_DELETE) });
  return bodies;
}

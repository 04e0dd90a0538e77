/**
 * What the grid asks GET /rows for: a filter (the API's `where` conditions, sent as they
 * are, so "the rows shown" and "the rows a run on them takes" are the same rows) and a
 * sort (a column, asc or desc), or a saved view's id (`saved-views.ts`). Plain data and
 * URLs; the server does the filtering and the ordering.
 */
import type { operations } from "@/client/schema";
import type { SortDirection } from "@/contracts/rows";
import type { Column, Group, RunCondition, TableView } from "@/contracts/table";
import type { WhereCondition } from "@/contracts/where";
import type { CellOutcome } from "@/domain/statuses";
import { displayValue } from "./values";

export interface RowSort {
  columnId: string;
  dir: SortDirection;
}

export interface RowQuery {
  where: WhereCondition[];
  sort: RowSort | null;
  /**
   * The saved view the rows are read through (`?view=`), while the filter bar still shows
   * it unedited: the server applies its filter and order, and refuses (409) a view that
   * no longer fits the table rather than the grid reading other rows than it names.
   */
  view?: string;
  /**
   * The view's `updatedAt` when opened from its answer: a view saved again reads its rows
   * again, though `?view=` is the same (its 409 may be gone). None when the URL's view is
   * filled in from its list: the same rows the first read asked for.
   */
  revision?: string;
}

export const NO_QUERY: RowQuery = { where: [], sort: null };

/** Rows per page of the grid's reads of GET /rows. */
export const ROWS_PAGE = 500;

type RowsPageQuery = NonNullable<operations["listRows"]["parameters"]["query"]>;

/**
 * Where a page of a read starts: the first rows, after or before a row (a page's
 * `nextCursor` / `prevCursor`), the last rows, or a fraction of the way through.
 */
export type PagePlace =
  | { at: "start" }
  | { at: "end" }
  | { after: string }
  | { before: string }
  | { seek: number };

/** GET /rows's query for one page of a read (the client sends `where` as JSON). */
export function rowsPageQuery(
  query: RowQuery,
  place: PagePlace,
  limit: number,
  opts: { total?: boolean } = {},
): RowsPageQuery {
  const where: Partial<RowsPageQuery> =
    "after" in place
      ? { cursor: place.after }
      : "before" in place
        ? { before: place.before }
        : "seek" in place
          ? { seek: place.seek }
          : place.at === "end"
            ? { from: "end" }
            : {};
  const counted: Partial<RowsPageQuery> = opts.total ? { total: "true" } : {};
  if (query.view) return { limit, view: query.view, ...where, ...counted };
  return {
    limit,
    ...(query.where.length > 0 ? { where: query.where } : {}),
    ...(query.sort ? { orderBy: query.sort.columnId, dir: query.sort.dir } : {}),
    ...where,
    ...counted,
  };
}

/** What a read of the rows is known by: two queries with the same key read the same rows. */
export function readKey(query: RowQuery, limit: number): string {
  return JSON.stringify([rowsPageQuery(query, { at: "start" }, limit), query.revision ?? null]);
}

/** `where` with `cond` added, unless an identical condition is already there. */
export function withCondition(where: WhereCondition[], cond: WhereCondition): WhereCondition[] {
  const key = JSON.stringify(cond);
  return where.some((c) => JSON.stringify(c) === key) ? where : [...where, cond];
}

/** A header click: ascending, then descending, then no sort. */
export function nextSort(sort: RowSort | null, columnId: string): RowSort | null {
  if (sort?.columnId !== columnId) return { columnId, dir: "asc" };
  return sort.dir === "asc" ? { columnId, dir: "desc" } : null;
}

const OP_WORDS: Record<string, string> = {
  eq: "is",
  neq: "is not",
  gt: ">",
  gte: "≥",
  lt: "<",
  lte: "≤",
  contains: "contains",
  empty: "is empty",
  not_empty: "is not empty",
};

export const opWords = (op: string): string => OP_WORDS[op] ?? op;

/** What a status condition reads as: "never run" for rows without a cell. */
export const statusWords = (status: string | null): string =>
  status === null ? "never run" : status === "error" ? "errors" : status;

/** How a completed cell ended, as an outcome condition reads ("Enrich: condition not met"). */
const OUTCOME_WORDS: Record<CellOutcome, string> = {
  ok: "done",
  skipped: "skipped",
  not_found: "not found",
  condition_not_met: "condition not met",
  over_budget: "over budget",
};

export const outcomeWords = (outcome: CellOutcome): string => OUTCOME_WORDS[outcome];

/** A condition as people read it, e.g. `Name contains "acme"` or `Enrich: errors`. */
export function describeCondition(
  table: Pick<TableView, "columns" | "groups">,
  cond: WhereCondition | RunCondition,
): string {
  if ("group" in cond) {
    const group = table.groups.find((g) => g.id === cond.group);
    const state = "outcome" in cond ? outcomeWords(cond.outcome) : statusWords(cond.status);
    return `${group?.name ?? cond.group}: ${state}`;
  }
  const column: Column | undefined = table.columns.find((c) => c.id === cond.column);
  const name = column?.name ?? cond.column;
  if (cond.value === undefined) return `${name} ${opWords(cond.op)}`;
  const value = typeof cond.value === "string" ? `“${cond.value}”` : displayValue(cond.value);
  return `${name} ${opWords(cond.op)} ${value}`;
}

/** A group's run conditions as people read them ("Tier is “pro” and Domain is not empty"), or null. */
export function describeRunIf(
  table: Pick<TableView, "columns" | "groups">,
  group: Pick<Group, "runIf">,
): string | null {
  const runIf = group.runIf ?? [];
  return runIf.length === 0 ? null : runIf.map((c) => describeCondition(table, c)).join(" and ");
}

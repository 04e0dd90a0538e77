/**
 * What the grid asks GET /rows for: a filter (the API's `where` conditions, sent as they
 * are, so "the rows shown" and "the rows a run on them takes" are the same rows) and a
 * sort (a column, asc or desc). Plain data and URLs; the server does the filtering and
 * the ordering.
 */
import type { operations } from "@/client/schema";
import type { SortDirection } from "@/contracts/rows";
import type { Column, TableView } from "@/contracts/table";
import type { WhereCondition } from "@/contracts/where";
import { displayValue } from "./values";

export interface RowSort {
  columnId: string;
  dir: SortDirection;
}

export interface RowQuery {
  where: WhereCondition[];
  sort: RowSort | null;
}

export const NO_QUERY: RowQuery = { where: [], sort: null };

type RowsPageQuery = NonNullable<operations["listRows"]["parameters"]["query"]>;

/** GET /rows's query for one page of a read (the client sends `where` as JSON). */
export function rowsPageQuery(
  query: RowQuery,
  cursor: string | null,
  limit: number,
): RowsPageQuery {
  return {
    limit,
    ...(query.where.length > 0 ? { where: query.where } : {}),
    ...(query.sort ? { orderBy: query.sort.columnId, dir: query.sort.dir } : {}),
    ...(cursor ? { cursor } : {}),
  };
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

/** A condition as people read it, e.g. `Name contains "acme"` or `Enrich: errors`. */
export function describeCondition(table: TableView, cond: WhereCondition): string {
  if ("group" in cond) {
    const group = table.groups.find((g) => g.id === cond.group);
    return `${group?.name ?? cond.group}: ${statusWords(cond.status)}`;
  }
  const column: Column | undefined = table.columns.find((c) => c.id === cond.column);
  const name = column?.name ?? cond.column;
  if (cond.value === undefined) return `${name} ${opWords(cond.op)}`;
  const value = typeof cond.value === "string" ? `“${cond.value}”` : displayValue(cond.value);
  return `${name} ${opWords(cond.op)} ${value}`;
}

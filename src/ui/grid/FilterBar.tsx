"use client";
/**
 * The bar above the grid: the filter's conditions as removable chips, a condition editor
 * to add one, the sort (set by clicking a column header) and each hidden column (hidden
 * from its header) as a chip, and "Run failed on matching rows", which sends this very
 * filter as the run's `where`. A saved view stores what this bar shows.
 */
import { useState } from "react";
import type { TableView } from "@/contracts/table";
import type { WhereCondition } from "@/contracts/where";
import { ConditionChips } from "./ConditionChips";
import { ConditionEditor } from "./ConditionEditor";
import { type RowQuery, withCondition } from "./row-query";

/** The API takes at most this many conditions. */
const MAX_CONDITIONS = 20;

export function FilterBar({
  table,
  query,
  matching,
  error,
  hidden,
  onChange,
  onShowColumn,
  onRunFailed,
}: {
  table: TableView;
  query: RowQuery;
  /** Rows loaded under the filter, and whether that is all of them. */
  matching: { rows: number; done: boolean };
  /** Why the rows of this filter or sort could not be read. */
  error: string | null;
  /** Ids of the columns the grid hides. */
  hidden: readonly string[];
  onChange(query: RowQuery): void;
  onShowColumn(columnId: string): void;
  onRunFailed(where: WhereCondition[]): void;
}) {
  const [adding, setAdding] = useState(false);
  const filtered = query.where.length > 0;
  const sortColumn = query.sort
    ? table.columns.find((c) => c.id === query.sort?.columnId)
    : undefined;
  return (
    <div className="filter-bar" data-testid="filter-bar">
      <span className="muted">Filter</span>
      <ConditionChips
        table={table}
        where={query.where}
        testId="filter-chip"
        onChange={(where) => onChange({ ...query, where })}
      />
      {adding ? (
        <ConditionEditor
          table={table}
          submitLabel="Add filter"
          onSubmit={(cond) => {
            onChange({ ...query, where: withCondition(query.where, cond) });
            setAdding(false);
          }}
          onCancel={() => setAdding(false)}
        />
      ) : (
        <button
          type="button"
          className="btn btn-small"
          data-testid="filter-add"
          disabled={query.where.length >= MAX_CONDITIONS}
          onClick={() => setAdding(true)}
        >
          + Filter
        </button>
      )}
      {filtered && (
        <button
          type="button"
          className="btn btn-small btn-ghost"
          onClick={() => onChange({ ...query, where: [] })}
        >
          Clear
        </button>
      )}
      {query.sort && (
        <span className="chip" data-testid="sort-chip">
          Sorted by {sortColumn?.name ?? query.sort.columnId} {query.sort.dir === "asc" ? "↑" : "↓"}
          <button
            type="button"
            className="icon-btn"
            aria-label="Remove the sort"
            onClick={() => onChange({ ...query, sort: null })}
          >
            ✕
          </button>
        </span>
      )}
      {hidden.map((id) => (
        <span className="chip" data-testid="hidden-chip" key={id}>
          {table.columns.find((c) => c.id === id)?.name ?? id} hidden
          <button
            type="button"
            className="icon-btn"
            aria-label="Show the column again"
            onClick={() => onShowColumn(id)}
          >
            ✕
          </button>
        </span>
      ))}
      {error && (
        <span className="field-error" role="alert">
          {error}
        </span>
      )}
      <div className="spacer" />
      {filtered && (
        <>
          <span className="muted" data-testid="matching-count">
            {matching.rows.toLocaleString()}
            {matching.done ? "" : "+"} matching rows
          </span>
          <button
            type="button"
            className="btn btn-small"
            data-testid="run-failed-matching"
            disabled={table.groups.length === 0}
            title="Re-run the cells whose last attempt errored, in the rows this filter matches"
            onClick={() => onRunFailed(query.where)}
          >
            Run failed on matching rows
          </button>
        </>
      )}
    </div>
  );
}

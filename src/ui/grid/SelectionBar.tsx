"use client";
/**
 * The line over the grid once the header's checkbox picked every loaded row of a table
 * (or filter) that has more: "Select all N rows" makes the selection every matching row
 * (`selection.ts`), and then says so, with a way to clear it. Nothing otherwise.
 */
import { isMatching, offersMatching, type Selection } from "./selection";

export function SelectionBar({
  selection,
  loaded,
  total,
  filtered,
  onSelect,
}: {
  selection: Selection;
  /** The ids of the rows held (the header's checkbox picks these). */
  loaded: readonly string[];
  /** The rows the filter matches. */
  total: number;
  /** Whether a filter (or a view's) narrows the rows. */
  filtered: boolean;
  onSelect(selection: Selection): void;
}) {
  const which = filtered ? " matching the filter" : "";
  const n = total.toLocaleString();
  if (isMatching(selection))
    return (
      <div className="notice row" data-testid="selection-bar" data-state="matching">
        <span>
          All {n} rows{which} are selected.
        </span>
        <button
          type="button"
          className="btn btn-small"
          onClick={() => onSelect({ kind: "ids", ids: new Set() })}
        >
          Clear selection
        </button>
      </div>
    );
  if (!offersMatching(selection, loaded, total)) return null;
  return (
    <div className="notice row" data-testid="selection-bar" data-state="loaded">
      <span>All {loaded.length.toLocaleString()} loaded rows are selected.</span>
      <button
        type="button"
        className="btn btn-small"
        data-testid="select-all-matching"
        onClick={() => onSelect({ kind: "matching" })}
      >
        Select all {n} rows{which}
      </button>
    </div>
  );
}

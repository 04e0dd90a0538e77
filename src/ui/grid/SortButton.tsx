"use client";
/** A column header's sort control: ascending, then descending, then no sort. */
import type { Column } from "@/contracts/table";
import type { RowSort } from "./row-query";

export function SortButton({
  column,
  sort,
  onSort,
}: {
  column: Column;
  sort: RowSort | null;
  onSort(columnId: string): void;
}) {
  const dir = sort?.columnId === column.id ? sort.dir : null;
  const next = dir === null ? "ascending" : dir === "asc" ? "descending" : "off";
  return (
    <button
      type="button"
      className={`icon-btn sort-btn${dir ? " active" : ""}`}
      data-testid={`sort-${column.id}`}
      data-dir={dir ?? "none"}
      aria-label={`Sort by ${column.name}: ${next}`}
      title={`Sort by ${column.name} (${next})`}
      onClick={() => onSort(column.id)}
    >
      {dir === "asc" ? "↑" : dir === "desc" ? "↓" : "⇅"}
    </button>
  );
}

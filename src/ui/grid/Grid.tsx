"use client";
/**
 * The grid itself: TanStack Table over the column model (`grid-columns.ts`) and TanStack
 * Virtual for the rows, so only what is on screen is rendered (10,000 rows scroll like
 * 10). Rows are shown in the order given (the server sorts). The header is `GridHeader`,
 * the rows `GridBody`; edits are `useCellEditing`, checked against the column type before
 * they are sent (`values.ts`).
 */
import { getCoreRowModel, useReactTable } from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useRef } from "react";
import type { TableProgress } from "@/contracts/progress";
import type { TableView } from "@/contracts/table";
import { GridBody, ROW_HEIGHT } from "./GridBody";
import { GridHeader, type GridSort } from "./GridHeader";
import type { GridActions } from "./grid-actions";
import { useColumns } from "./grid-columns";
import type { RowView } from "./model";
import { useCellEditing } from "./use-cell-editing";

interface Props {
  table: TableView;
  rows: RowView[];
  version: number;
  selected: Set<string>;
  onSelect(ids: Set<string>): void;
  actions: GridActions;
  /** The sort the rows were read in; a column header's sort button cycles it. */
  sort?: GridSort;
  /** Each group's progress, for the bars in the group headers (null until read). */
  progress?: TableProgress | null;
  /** Column ids not shown (a saved view's hidden columns, or hidden from a header). */
  hidden?: readonly string[];
}

export function Grid({
  table,
  rows,
  version,
  selected,
  onSelect,
  actions,
  sort,
  progress,
  hidden = [],
}: Props) {
  const columns = useColumns(table);
  const columnVisibility = Object.fromEntries(hidden.map((id) => [`col:${id}`, false]));
  // `rows` is a new array after every change; `version` says so for memoised children.
  const model = useReactTable({
    data: rows,
    columns,
    getCoreRowModel: getCoreRowModel(),
    getRowId: (r) => r.id,
    state: { columnVisibility },
  });
  // The scroll element holds the header too; it is rendered here, so it is attached
  // before the virtualizer's first measure.
  const scroll = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroll.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const editing = useCellEditing(actions.saveValue);

  return (
    <div className="grid-scroll" ref={scroll} data-testid="grid" data-version={version}>
      <div style={{ width: model.getTotalSize(), minWidth: "100%" }}>
        <GridHeader
          headerGroups={model.getHeaderGroups()}
          rows={rows}
          selected={selected}
          onSelect={onSelect}
          actions={actions}
          sort={sort}
          progress={progress ?? null}
        />
        <GridBody
          virtual={virtual}
          rows={model.getRowModel().rows}
          selected={selected}
          onSelect={onSelect}
          actions={actions}
          editing={editing}
        />
      </div>
    </div>
  );
}

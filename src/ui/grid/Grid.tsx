"use client";
/**
 * The grid itself: TanStack Table over the column model (`grid-columns.ts`) and TanStack
 * Virtual for the rows, so only what is on screen is rendered. The scroll space stands
 * for all `total` rows, of which the browser holds a window (`rows`, the first at index
 * `start`): the rows on screen are told (`onRange`) so the window reads them, and those
 * not read yet show as empty rows. A million rows are taller than a browser draws an
 * element (about 33.5M px in Chromium, 17.9M in Firefox): past SCROLL_SPACE_MAX the space
 * is scaled, a pixel of scrollbar standing for more than a pixel of rows. Rows are shown
 * in the order given (the server sorts). The header is `GridHeader`, the rows
 * `GridBody`; edits are `useCellEditing`, checked against the column type before they
 * are sent (`values.ts`).
 */
import { getCoreRowModel, useReactTable } from "@tanstack/react-table";
import { observeElementOffset, useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useRef } from "react";
import type { TableProgress } from "@/contracts/progress";
import type { TableView } from "@/contracts/table";
import { GridBody, ROW_HEIGHT } from "./GridBody";
import { GridHeader, type GridSort } from "./GridHeader";
import type { GridActions } from "./grid-actions";
import { useColumns } from "./grid-columns";
import type { RowView } from "./model";
import { rowToggled, type Selection } from "./selection";
import { useCellEditing } from "./use-cell-editing";

interface Props {
  table: TableView;
  rows: RowView[];
  version: number;
  selected: Selection;
  onSelect(selection: Selection): void;
  actions: GridActions;
  /** The sort the rows were read in; a column header's sort button cycles it. */
  sort?: GridSort;
  /** Each group's progress, for the bars in the group headers (null until read). */
  progress?: TableProgress | null;
  /** Column ids not shown (a saved view's hidden columns, or hidden from a header). */
  hidden?: readonly string[];
  /** The rows that match, and the index of the first of `rows` among them. */
  total: number;
  start: number;
  /** Moves with a read from the first row: back to the top. */
  readId: number;
  /** The rows on screen (indexes among `total`) moved. */
  onRange(range: { first: number; last: number }): void;
}

/** The tallest scroll space drawn; more rows than fit it scale it. */
const SCROLL_SPACE_MAX = 15_000_000;

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
  total: totalGiven,
  start,
  readId,
  onRange,
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
  const body = useRef<HTMLDivElement>(null);
  const total = Math.max(totalGiven, start + rows.length);
  const full = total * ROW_HEIGHT;
  const space = Math.min(full, SCROLL_SPACE_MAX);
  /** Rows' pixels per scrollbar pixel (1 until the space is scaled), at scroll time. */
  const ratio = () => {
    const el = scroll.current;
    if (!el || space === full) return 1;
    const above = body.current?.offsetTop ?? 0;
    return Math.max(1, (full + above - el.clientHeight) / (space + above - el.clientHeight));
  };
  const ratioRef = useRef(ratio);
  ratioRef.current = ratio;
  const virtual = useVirtualizer({
    count: total,
    getScrollElement: () => scroll.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    // The virtualizer works in rows' pixels: the scrollbar's, scaled.
    observeElementOffset: (instance, cb) =>
      observeElementOffset(instance, (offset, scrolling) =>
        cb(offset * ratioRef.current(), scrolling),
      ),
  });
  const editing = useCellEditing(actions.saveValue);
  const items = virtual.getVirtualItems();
  const first = items[0]?.index ?? 0;
  const last = items.at(-1)?.index ?? 0;
  useEffect(() => onRange({ first, last }), [first, last, onRange]);
  // A new filter or sort starts at its first row.
  useEffect(() => {
    if (readId > 0) scroll.current?.scrollTo({ top: 0 });
  }, [readId]);
  // Where the scaled rows stand: their offset in rows' pixels less the scrolled distance.
  const offset = virtual.scrollOffset ?? 0;
  const shift = offset - offset / ratio();

  return (
    <div className="grid-scroll" ref={scroll} data-testid="grid" data-version={version}>
      <div style={{ width: model.getTotalSize(), minWidth: "100%" }}>
        <GridHeader
          headerGroups={model.getHeaderGroups()}
          rows={rows}
          total={total}
          selected={selected}
          onSelect={onSelect}
          actions={actions}
          sort={sort}
          progress={progress ?? null}
        />
        <GridBody
          ref={body}
          items={items}
          height={space}
          shift={shift}
          start={start}
          rows={model.getRowModel().rows}
          selected={selected}
          onToggle={(rowId) =>
            onSelect(
              rowToggled(
                selected,
                rowId,
                rows.map((r) => r.id),
              ),
            )
          }
          actions={actions}
          editing={editing}
        />
      </div>
    </div>
  );
}

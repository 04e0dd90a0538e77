"use client";
/**
 * The grid's body: only the rows the virtualizer puts on screen, each placed at its
 * offset (less `shift`, where the scroll space is scaled), so a million rows render like
 * the few that show; a row not read yet shows empty. A row draws its cells from the
 * column model: lead, group status, or value (being edited or not).
 */
import type { Row } from "@tanstack/react-table";
import type { VirtualItem } from "@tanstack/react-virtual";
import type { Ref } from "react";
import { EditingCell, LeadCell, StatusCell, ValueCell } from "./GridCells";
import type { GridActions } from "./grid-actions";
import { metaOf } from "./grid-columns";
import type { RowView } from "./model";
import { isSelected as picked, type Selection } from "./selection";
import type { CellEditing } from "./use-cell-editing";

export const ROW_HEIGHT = 34;

interface RowsProps {
  selected: Selection;
  /** A row's checkbox was clicked. */
  onToggle(rowId: string): void;
  actions: GridActions;
  editing: CellEditing;
}

export function GridBody({
  ref,
  items,
  height,
  shift,
  start,
  rows,
  ...props
}: RowsProps & {
  ref: Ref<HTMLDivElement>;
  /** The rows on screen, by index among all. */
  items: VirtualItem[];
  height: number;
  shift: number;
  /** The index of `rows[0]` among all. */
  start: number;
  /** The table model's rows (the window), in the order shown. */
  rows: Row<RowView>[];
}) {
  return (
    <div ref={ref} style={{ height, position: "relative" }}>
      {items.map((v) => {
        const r = rows[v.index - start];
        const top = v.start - shift;
        if (!r)
          return (
            <div
              key={`at-${v.index}`}
              className="grid-row"
              data-testid="grid-row-unread"
              style={{ top, height: ROW_HEIGHT }}
            />
          );
        return <GridRow key={r.original.id} row={r} index={v.index} top={top} {...props} />;
      })}
    </div>
  );
}

function GridRow({
  row: r,
  index,
  top,
  selected,
  onToggle,
  actions,
  editing,
}: RowsProps & { row: Row<RowView>; index: number; top: number }) {
  const row = r.original;
  const isSelected = picked(selected, row.id);
  const toggle = () => onToggle(row.id);
  return (
    <div
      className="grid-row"
      data-row-id={row.id}
      data-testid="grid-row"
      style={{ top, height: ROW_HEIGHT }}
    >
      {r.getVisibleCells().map((cell) => {
        const meta = metaOf(cell.column);
        const key = cell.id;
        const base = {
          className: `grid-cell${isSelected ? " selected-row" : ""}`,
          width: cell.column.getSize(),
          row,
        };
        if (meta?.kind === "lead")
          return (
            <LeadCell
              key={key}
              {...base}
              index={index}
              selected={isSelected}
              onToggle={toggle}
              actions={actions}
            />
          );
        if (meta?.kind === "status")
          return <StatusCell key={key} {...base} group={meta.group} actions={actions} />;
        if (meta?.kind !== "value") return null;
        const draft = editing.at(row.id, meta.column.id);
        if (draft)
          return (
            <EditingCell key={key} {...base} column={meta.column} draft={draft} editing={editing} />
          );
        return (
          <ValueCell
            key={key}
            {...base}
            column={meta.column}
            output={meta.output}
            editing={editing}
            saveValue={actions.saveValue}
          />
        );
      })}
    </div>
  );
}

"use client";
/**
 * The cells of a grid row: the lead cell (select, row number, run / stop / delete), a
 * group's status cell, a value cell (double-click, Enter or F2 opens its editor; a
 * boolean toggles in place) and the value cell being edited.
 */
import type { Column, Group } from "@/contracts/table";
import { CellStatus } from "./CellStatus";
import type { GridActions } from "./grid-actions";
import type { RowView } from "./model";
import type { CellDraft, CellEditing } from "./use-cell-editing";
import { displayValue } from "./values";

interface CellBase {
  className: string;
  width: number;
  row: RowView;
}

export function LeadCell({
  className,
  width,
  row,
  index,
  selected,
  onToggle,
  actions,
}: CellBase & {
  index: number;
  selected: boolean;
  onToggle(): void;
  actions: Pick<GridActions, "runRow" | "stopRow" | "deleteRow">;
}) {
  return (
    <div className={className} style={{ width }}>
      <input
        type="checkbox"
        aria-label={`Select row ${index + 1}`}
        checked={selected}
        onChange={onToggle}
      />
      <span className="muted">{index + 1}</span>
      <span className="row-actions">
        <button
          type="button"
          className="icon-btn"
          title="Run this row"
          onClick={() => actions.runRow(row)}
        >
          ▶
        </button>
        <button
          type="button"
          className="icon-btn"
          title="Stop this row"
          onClick={() => actions.stopRow(row)}
        >
          ■
        </button>
        <button
          type="button"
          className="icon-btn"
          title="Delete this row"
          onClick={() => actions.deleteRow(row)}
        >
          ✕
        </button>
      </span>
    </div>
  );
}

export function StatusCell({
  className,
  width,
  row,
  group,
  actions,
}: CellBase & { group: Group; actions: Pick<GridActions, "approve" | "details"> }) {
  return (
    <div className={className} style={{ width }} data-testid={`cell-${group.id}`}>
      <CellStatus
        cell={row.cells[group.id]}
        group={group}
        onApprove={() => actions.approve(row, group)}
        onDetails={() => actions.details(row, group)}
      />
    </div>
  );
}

export function EditingCell({
  className,
  width,
  row,
  column,
  draft,
  editing,
}: CellBase & { column: Column; draft: CellDraft; editing: CellEditing }) {
  return (
    <div
      className={`${className} editing${draft.error ? " invalid" : ""}`}
      style={{ width }}
      title={draft.error ?? ""}
    >
      <input
        className="cell-input"
        aria-label={`${column.name} value`}
        aria-invalid={draft.error !== null}
        // biome-ignore lint/a11y/noAutofocus: the user just asked to edit this cell
        autoFocus
        value={draft.draft}
        onChange={(e) => editing.change(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") void editing.commit(row, column);
          if (e.key === "Escape") editing.cancel();
        }}
        onBlur={() => void editing.commit(row, column)}
      />
    </div>
  );
}

export function ValueCell({
  className,
  width,
  row,
  column,
  output,
  editing,
  saveValue,
}: CellBase & {
  column: Column;
  /** A group's output column, shown apart from the columns people fill. */
  output: boolean;
  editing: CellEditing;
  saveValue: GridActions["saveValue"];
}) {
  const value = row.data[column.id];
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a value cell opens its editor on double-click, Enter or F2
    <div
      className={`${className}${output ? " output" : ""}`}
      style={{ width }}
      data-testid={`value-${column.id}`}
      title={displayValue(value)}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a cell is focusable to edit it with Enter or F2
      tabIndex={0}
      onDoubleClick={() => editing.start(row, column)}
      onKeyDown={(e) => {
        if (e.key === "Enter" || e.key === "F2") editing.start(row, column);
      }}
    >
      {column.type === "boolean" && typeof value === "boolean" ? (
        <input
          type="checkbox"
          aria-label={column.name}
          checked={value}
          onChange={() => void saveValue(row, column, !value)}
        />
      ) : value === undefined || value === null ? (
        <span className="empty" />
      ) : (
        displayValue(value)
      )}
    </div>
  );
}

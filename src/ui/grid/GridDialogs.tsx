"use client";
/**
 * The editors and dialogs the table page opens, one at a time: a column's or a group's
 * editor (new or existing), the AI column, a cell's approval and details, and the
 * schedules. What is open is the page's state; each closes through `onClose`, and an
 * editor that saved hands the table back through `onSaved`.
 */
import type { Column, Group, TableView } from "@/contracts/table";
import { AiColumnDialog } from "./AiColumnDialog";
import { CellDetailsDialog } from "./CellDetails";
import { ColumnEditor } from "./ColumnEditor";
import { ApproveDialog } from "./Dialogs";
import { GroupEditor } from "./GroupEditor";
import type { RowView } from "./model";
import { SchedulesDialog } from "./SchedulesDialog";
import { pickedIds, type Selection } from "./selection";

export type OpenDialog =
  | { kind: "column"; column?: Column }
  | { kind: "group"; group?: Group }
  | { kind: "ai-column" }
  | { kind: "approve"; row: RowView; group: Group }
  | { kind: "details"; row: RowView; group: Group }
  | { kind: "schedules" }
  | null;

/** The AI column's try row under a `matching` selection: the first row shown. */
const NONE_PICKED: ReadonlySet<string> = new Set();

export function GridDialogs({
  open,
  tableId,
  table,
  rows,
  selected,
  current,
  onClose,
  onSaved,
}: {
  open: OpenDialog;
  tableId: string;
  table: TableView | null;
  /** The rows shown, for the AI column's try row. */
  rows: RowView[];
  selected: Selection;
  /** A row as the page holds it now (it may have changed since the dialog opened). */
  current: (row: RowView) => RowView;
  onClose: () => void;
  onSaved: (table: TableView) => void;
}) {
  if (!open) return null;
  switch (open.kind) {
    case "column":
      return table ? (
        <ColumnEditor
          table={table}
          {...(open.column ? { column: open.column } : {})}
          onClose={onClose}
          onSaved={onSaved}
        />
      ) : null;
    case "group":
      return table ? (
        <GroupEditor
          table={table}
          {...(open.group ? { group: open.group } : {})}
          onClose={onClose}
          onSaved={onSaved}
        />
      ) : null;
    case "ai-column":
      return table ? (
        <AiColumnDialog
          table={table}
          rows={rows}
          selected={pickedIds(selected) ?? NONE_PICKED}
          onClose={onClose}
          onSaved={onSaved}
        />
      ) : null;
    case "approve":
      return (
        <ApproveDialog
          tableId={tableId}
          row={current(open.row)}
          group={open.group}
          onClose={onClose}
        />
      );
    case "details":
      return (
        <CellDetailsDialog
          tableId={tableId}
          row={current(open.row)}
          group={open.group}
          onClose={onClose}
        />
      );
    case "schedules":
      return <SchedulesDialog tableId={tableId} onClose={onClose} />;
  }
}

"use client";
/**
 * The one value cell being edited: its draft text, and the error that keeps it open (the
 * draft does not fit the column's type, or the API refused it). Enter or leaving the cell
 * saves, Escape drops the draft, and an unchanged value closes without a request.
 */
import { useState } from "react";
import type { Column } from "@/contracts/table";
import type { GridActions } from "./grid-actions";
import type { RowView } from "./model";
import { checkEdit, displayValue } from "./values";

export interface CellDraft {
  rowId: string;
  columnId: string;
  draft: string;
  error: string | null;
}

export interface CellEditing {
  /** The draft of this cell, when it is the one being edited. */
  at(rowId: string, columnId: string): CellDraft | null;
  start(row: RowView, column: Column): void;
  change(draft: string): void;
  cancel(): void;
  commit(row: RowView, column: Column): Promise<void>;
}

export function useCellEditing(save: GridActions["saveValue"]): CellEditing {
  const [editing, setEditing] = useState<CellDraft | null>(null);
  return {
    at: (rowId, columnId) =>
      editing?.rowId === rowId && editing.columnId === columnId ? editing : null,
    start: (row, column) =>
      setEditing({
        rowId: row.id,
        columnId: column.id,
        draft: displayValue(row.data[column.id]),
        error: null,
      }),
    change: (draft) => {
      if (editing) setEditing({ ...editing, draft, error: null });
    },
    cancel: () => setEditing(null),
    commit: async (row, column) => {
      if (!editing) return;
      const edit = checkEdit(column, editing.draft, row.data[column.id]);
      if (edit.kind === "invalid") {
        setEditing({ ...editing, error: edit.message });
        return;
      }
      if (edit.kind === "unchanged") {
        setEditing(null);
        return;
      }
      const error = await save(row, column, edit.value);
      if (error) setEditing({ ...editing, error });
      else setEditing(null);
    },
  };
}

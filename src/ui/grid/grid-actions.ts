/** What the grid asks of its page: saving a value, a row's and a cell's buttons, the editors. */
import type { Column, Group } from "@/contracts/table";
import type { RowView } from "./model";

export interface GridActions {
  saveValue(row: RowView, column: Column, value: unknown): Promise<string | null>;
  runRow(row: RowView): void;
  stopRow(row: RowView): void;
  deleteRow(row: RowView): void;
  approve(row: RowView, group: Group): void;
  details(row: RowView, group: Group): void;
  editColumn(column: Column): void;
  /** Hides a column from the grid (the filter bar lists it, to show again or save in a view). */
  hideColumn(column: Column): void;
  editGroup(group: Group): void;
  groupMenu(group: Group, anchor: HTMLElement): void;
}

"use client";
/**
 * A cell a link names (`?row=<rowId>&group=<groupId>`, as the System page's errors link
 * to them): once the table is read, its row is read by id (it may be far from the rows on
 * screen) and the cell's details open, once per page load. A row or group that is gone
 * is said instead.
 */
import { useEffect, useRef } from "react";
import type { Group, TableView } from "@/contracts/table";
import { answer, api, describeError } from "../api";
import type { RowView } from "./model";

export interface LinkedCell {
  rowId: string;
  groupId: string;
}

export function useLinkedCell(
  tableId: string,
  cell: LinkedCell | undefined,
  table: TableView | null,
  show: (row: RowView, group: Group) => void,
  fail: (message: string) => void,
): void {
  const done = useRef(false);
  useEffect(() => {
    if (!cell || !table || done.current) return;
    done.current = true;
    const group = table.groups.find((g) => g.id === cell.groupId);
    if (!group) {
      fail(`The linked cell's column group “${cell.groupId}” is no longer in this table.`);
      return;
    }
    answer(
      api.GET("/api/tables/{id}/rows/{rowId}", {
        params: { path: { id: tableId, rowId: cell.rowId } },
      }),
    ).then(
      (row) => show(row, group),
      (err: unknown) => fail(`The linked cell could not be opened: ${describeError(err)}`),
    );
  }, [tableId, cell, table, show, fail]);
}

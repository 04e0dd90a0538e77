"use client";
/**
 * The grid itself: TanStack Table over the column model (`grid-columns.ts`) and TanStack
 * Virtual for the rows, so only what is on screen is rendered (10,000 rows scroll like
 * 10). Rows are shown in the order given (the server sorts). Edits are checked against
 * the column type before they are sent (`values.ts`).
 */
import { flexRender, getCoreRowModel, useReactTable } from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useRef, useState } from "react";
import type { Column, Group, TableView } from "@/contracts/table";
import { CellStatus } from "./CellStatus";
import { metaOf, useColumns } from "./grid-columns";
import type { RowView } from "./model";
import type { RowSort } from "./row-query";
import { SortButton } from "./SortButton";
import { displayValue, parseInput } from "./values";

export interface GridActions {
  saveValue(row: RowView, column: Column, value: unknown): Promise<string | null>;
  runRow(row: RowView): void;
  stopRow(row: RowView): void;
  deleteRow(row: RowView): void;
  approve(row: RowView, group: Group): void;
  details(row: RowView, group: Group): void;
  editColumn(column: Column): void;
  editGroup(group: Group): void;
  groupMenu(group: Group, anchor: HTMLElement): void;
}

interface Props {
  table: TableView;
  rows: RowView[];
  version: number;
  selected: Set<string>;
  onSelect(ids: Set<string>): void;
  actions: GridActions;
  /** The sort the rows were read in; a column header's sort button cycles it. */
  sort?: { current: RowSort | null; onSort(columnId: string): void };
}

const ROW_HEIGHT = 34;

export function Grid({ table, rows, version, selected, onSelect, actions, sort }: Props) {
  const columns = useColumns(table);
  // `rows` is a new array after every change; `version` says so for memoised children.
  const model = useReactTable({
    data: rows,
    columns,
    getCoreRowModel: getCoreRowModel(),
    getRowId: (r) => r.id,
  });
  const scroll = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroll.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const [editing, setEditing] = useState<{
    rowId: string;
    columnId: string;
    draft: string;
    error: string | null;
  } | null>(null);
  const width = model.getTotalSize();
  const all = selected.size > 0 && selected.size === rows.length;

  const commit = async (row: RowView, column: Column) => {
    if (!editing) return;
    const parsed = parseInput(column, editing.draft);
    if (!parsed.ok) {
      setEditing({ ...editing, error: parsed.message });
      return;
    }
    if (displayValue(row.data[column.id]) === displayValue(parsed.value)) {
      setEditing(null);
      return;
    }
    const error = await actions.saveValue(row, column, parsed.value);
    if (error) setEditing({ ...editing, error });
    else setEditing(null);
  };

  const headerGroups = model.getHeaderGroups();
  const leafRows = model.getRowModel().rows;

  return (
    <div className="grid-scroll" ref={scroll} data-testid="grid" data-version={version}>
      <div style={{ width, minWidth: "100%" }}>
        <div className="grid-head">
          {headerGroups.map((hg, depth) => (
            <div key={hg.id} className="row" style={{ gap: 0, height: 32 }}>
              {hg.headers.map((h) => {
                const meta = metaOf(h.column);
                const isGroup = h.column.columns.length > 0;
                const group = meta?.kind === "status" ? meta.group : null;
                // With groups there are two header rows: leaf columns outside any group
                // show in the lower one, the upper one is blank above them.
                const upper = depth < headerGroups.length - 1;
                if (h.isPlaceholder || (upper && !isGroup)) {
                  return (
                    <div
                      key={h.id}
                      className="grid-hcell"
                      style={{ width: h.getSize(), height: 32, borderBottomColor: "transparent" }}
                    />
                  );
                }
                if (isGroup && group) {
                  return (
                    <div
                      key={h.id}
                      className="grid-hcell group"
                      style={{ width: h.getSize(), height: 32 }}
                      data-testid={`group-header-${group.id}`}
                    >
                      <span className={`kind ${group.kind}`}>{group.kind}</span>
                      <button
                        type="button"
                        className="linklike"
                        title="Edit group"
                        onClick={() => actions.editGroup(group)}
                      >
                        {group.name}
                      </button>
                      {group.autoRun && <span className="type">auto</span>}
                      <button
                        type="button"
                        className="btn btn-small hcell-menu"
                        data-testid={`run-menu-${group.id}`}
                        onClick={(e) => actions.groupMenu(group, e.currentTarget)}
                      >
                        Run ▾
                      </button>
                    </div>
                  );
                }
                if (meta?.kind === "lead") {
                  return (
                    <div
                      key={h.id}
                      className="grid-hcell"
                      style={{ width: h.getSize(), height: 32 }}
                    >
                      <input
                        type="checkbox"
                        aria-label="Select all rows"
                        checked={all}
                        onChange={() => onSelect(all ? new Set() : new Set(rows.map((r) => r.id)))}
                      />
                      <span className="muted">{rows.length.toLocaleString()} rows</span>
                    </div>
                  );
                }
                if (meta?.kind === "value") {
                  return (
                    <div
                      key={h.id}
                      className="grid-hcell"
                      style={{ width: h.getSize(), height: 32 }}
                    >
                      <button
                        type="button"
                        className="linklike"
                        title="Edit column"
                        onClick={() => actions.editColumn(meta.column)}
                      >
                        {meta.column.name}
                      </button>
                      <span className="type">{meta.column.type}</span>
                      {sort && (
                        <SortButton column={meta.column} sort={sort.current} onSort={sort.onSort} />
                      )}
                    </div>
                  );
                }
                return (
                  <div key={h.id} className="grid-hcell" style={{ width: h.getSize(), height: 32 }}>
                    {flexRender(h.column.columnDef.header, h.getContext())}
                  </div>
                );
              })}
            </div>
          ))}
        </div>
        <div style={{ height: virtual.getTotalSize(), position: "relative" }}>
          {virtual.getVirtualItems().map((v) => {
            const r = leafRows[v.index];
            if (!r) return null;
            const row = r.original;
            const isSelected = selected.has(row.id);
            return (
              <div
                key={row.id}
                className="grid-row"
                data-row-id={row.id}
                data-testid="grid-row"
                style={{ top: v.start, height: ROW_HEIGHT }}
              >
                {r.getVisibleCells().map((cell) => {
                  const meta = metaOf(cell.column);
                  const w = cell.column.getSize();
                  const cls = `grid-cell${isSelected ? " selected-row" : ""}`;
                  if (meta?.kind === "lead") {
                    return (
                      <div key={cell.id} className={cls} style={{ width: w }}>
                        <input
                          type="checkbox"
                          aria-label={`Select row ${v.index + 1}`}
                          checked={isSelected}
                          onChange={() => {
                            const next = new Set(selected);
                            if (isSelected) next.delete(row.id);
                            else next.add(row.id);
                            onSelect(next);
                          }}
                        />
                        <span className="muted">{v.index + 1}</span>
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
                  if (meta?.kind === "status") {
                    const group = meta.group;
                    return (
                      <div
                        key={cell.id}
                        className={cls}
                        style={{ width: w }}
                        data-testid={`cell-${group.id}`}
                      >
                        <CellStatus
                          cell={row.cells[group.id]}
                          group={group}
                          onApprove={() => actions.approve(row, group)}
                          onDetails={() => actions.details(row, group)}
                        />
                      </div>
                    );
                  }
                  if (meta?.kind !== "value") return null;
                  const column = meta.column;
                  const value = row.data[column.id];
                  const isEditing = editing?.rowId === row.id && editing.columnId === column.id;
                  if (isEditing && editing) {
                    return (
                      <div
                        key={cell.id}
                        className={`${cls} editing${editing.error ? " invalid" : ""}`}
                        style={{ width: w }}
                        title={editing.error ?? ""}
                      >
                        <input
                          className="cell-input"
                          aria-label={`${column.name} value`}
                          aria-invalid={editing.error !== null}
                          // biome-ignore lint/a11y/noAutofocus: the user just asked to edit this cell
                          autoFocus
                          value={editing.draft}
                          onChange={(e) =>
                            setEditing({ ...editing, draft: e.target.value, error: null })
                          }
                          onKeyDown={(e) => {
                            if (e.key === "Enter") void commit(row, column);
                            if (e.key === "Escape") setEditing(null);
                          }}
                          onBlur={() => void commit(row, column)}
                        />
                      </div>
                    );
                  }
                  return (
                    // biome-ignore lint/a11y/noStaticElementInteractions: a value cell opens its editor on double-click, Enter or F2
                    <div
                      key={cell.id}
                      className={`${cls}${meta.output ? " output" : ""}`}
                      style={{ width: w }}
                      data-testid={`value-${column.id}`}
                      title={displayValue(value)}
                      // biome-ignore lint/a11y/noNoninteractiveTabindex: a cell is focusable to edit it with Enter or F2
                      tabIndex={0}
                      onDoubleClick={() =>
                        setEditing({
                          rowId: row.id,
                          columnId: column.id,
                          draft: displayValue(value),
                          error: null,
                        })
                      }
                      onKeyDown={(e) => {
                        if (e.key === "Enter" || e.key === "F2")
                          setEditing({
                            rowId: row.id,
                            columnId: column.id,
                            draft: displayValue(value),
                            error: null,
                          });
                      }}
                    >
                      {column.type === "boolean" && typeof value === "boolean" ? (
                        <input
                          type="checkbox"
                          aria-label={column.name}
                          checked={value}
                          onChange={() => void actions.saveValue(row, column, !value)}
                        />
                      ) : value === undefined || value === null ? (
                        <span className="empty" />
                      ) : (
                        displayValue(value)
                      )}
                    </div>
                  );
                })}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}

"use client";
/**
 * The grid itself: TanStack Table for the column model (ordinary columns, then each
 * group's status and output columns under one group header) and TanStack Virtual for
 * the rows, so only what is on screen is rendered (10,000 rows scroll like 10). Edits are
 * checked against the column type before they are sent (`values.ts`).
 */
import {
  type ColumnDef,
  createColumnHelper,
  flexRender,
  getCoreRowModel,
  useReactTable,
} from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useMemo, useRef, useState } from "react";
import type { Column, Group, TableView } from "../../contracts/table";
import { CellStatus } from "./CellStatus";
import type { RowView } from "./model";
import { displayValue, parseInput } from "./values";

type Meta =
  | { kind: "lead" }
  | { kind: "value"; column: Column; output: boolean }
  | { kind: "status"; group: Group };

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
}

const ROW_HEIGHT = 34;
const WIDTH: Record<Column["type"], number> = {
  text: 200,
  number: 110,
  boolean: 90,
  date: 130,
  json: 220,
  select: 140,
};

const helper = createColumnHelper<RowView>();

function useColumns(table: TableView): ColumnDef<RowView, unknown>[] {
  return useMemo(() => {
    const owned = new Map<string, Group>();
    for (const g of table.groups) for (const o of g.outputs) owned.set(o.columnId, g);
    const byId = new Map(table.columns.map((c) => [c.id, c]));
    const valueColumn = (c: Column, output: boolean) =>
      helper.display({
        id: `col:${c.id}`,
        header: c.name,
        size: WIDTH[c.type],
        meta: { kind: "value", column: c, output } satisfies Meta,
      });
    const defs: ColumnDef<RowView, unknown>[] = [
      helper.display({ id: "lead", header: "#", size: 120, meta: { kind: "lead" } satisfies Meta }),
      ...table.columns.filter((c) => !owned.has(c.id)).map((c) => valueColumn(c, false)),
    ];
    for (const g of table.groups) {
      const outputs = g.outputs
        .map((o) => byId.get(o.columnId))
        .filter((c): c is Column => c !== undefined);
      defs.push(
        helper.group({
          id: `group:${g.id}`,
          header: g.name,
          meta: { kind: "status", group: g } satisfies Meta,
          columns: [
            helper.display({
              id: `status:${g.id}`,
              header: "Status",
              size: 190,
              meta: { kind: "status", group: g } satisfies Meta,
            }),
            ...outputs.map((c) => valueColumn(c, true)),
          ],
        }),
      );
    }
    return defs;
  }, [table]);
}

const metaOf = (def: { columnDef: { meta?: unknown } }) => def.columnDef.meta as Meta | undefined;

export function Grid({ table, rows, version, selected, onSelect, actions }: Props) {
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

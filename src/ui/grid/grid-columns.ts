"use client";
/**
 * The grid's column model for TanStack Table: ordinary columns first, then each group's
 * status column and output columns under one group header. Each column carries what it
 * shows (`Meta`), which the grid reads to render its header and cells.
 */
import { type ColumnDef, createColumnHelper } from "@tanstack/react-table";
import { useMemo } from "react";
import type { Column, Group, TableView } from "@/contracts/table";
import type { RowView } from "./model";
import { describeRunIf } from "./row-query";

export type Meta =
  | { kind: "lead" }
  | { kind: "value"; column: Column; output: boolean }
  /** `runIf`: the group's run conditions as people read them (none: null). */
  | { kind: "status"; group: Group; runIf: string | null };
const WIDTH: Record<Column["type"], number> = {
  text: 200,
  number: 110,
  boolean: 90,
  date: 130,
  json: 220,
  select: 140,
};

const helper = createColumnHelper<RowView>();

export function useColumns(table: TableView): ColumnDef<RowView, unknown>[] {
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
      const status = { kind: "status", group: g, runIf: describeRunIf(table, g) } satisfies Meta;
      const outputs = g.outputs
        .map((o) => byId.get(o.columnId))
        .filter((c): c is Column => c !== undefined);
      defs.push(
        helper.group({
          id: `group:${g.id}`,
          header: g.name,
          meta: status,
          columns: [
            helper.display({
              id: `status:${g.id}`,
              header: "Status",
              size: 190,
              meta: status,
            }),
            ...outputs.map((c) => valueColumn(c, true)),
          ],
        }),
      );
    }
    return defs;
  }, [table]);
}

export const metaOf = (def: { columnDef: { meta?: unknown } }) =>
  def.columnDef.meta as Meta | undefined;

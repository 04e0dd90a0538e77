/**
 * What `run` and `stop` share: the table a command names, and the part of it its flags
 * cover — `--group` by id or name, `--where`/`--where-json` conditions typed by their
 * columns (where-args.ts). A name that matches nothing is bad usage, listing what there is.
 */
import type { Schemas } from "@/client/cellflow-client";
import type { Connection } from "./connection";
import { type CliContext, connect } from "./context";
import type { CliResult } from "./failure";
import { findTable, pickPart, type Table } from "./table-ref";
import { whereOf } from "./where-args";

export interface ScopeFlags {
  group?: string[];
  where?: string[];
  "where-json"?: string;
}

/** The scope fields of a run or stop request; a field the flags leave out is absent. */
export interface Scope {
  groupIds?: string[];
  where?: Schemas["WhereCondition"][];
}

/** The connection the environment gives and the table `ref` names (by id or name). */
export async function commandTable(
  ctx: CliContext,
  ref: string,
): Promise<CliResult<{ conn: Connection; table: Table }>> {
  const conn = connect(ctx);
  if (!conn.ok) return conn;
  const table = await findTable(conn.value, ref);
  if (!table.ok) return table;
  return { ok: true, value: { conn: conn.value, table: table.value } };
}

/** The groups and row conditions the flags name, as ids and typed conditions. */
export function scopeOf(table: Table, flags: ScopeFlags): CliResult<Scope> {
  const groupIds: string[] = [];
  for (const g of flags.group ?? []) {
    const group = pickPart(table.groups, g, "group", table);
    if (!group.ok) return group;
    groupIds.push(group.value.id);
  }
  const where = whereOf(table, flags.where ?? [], flags["where-json"]);
  if (!where.ok) return where;
  return {
    ok: true,
    value: {
      ...(groupIds.length ? { groupIds } : {}),
      ...(where.value ? { where: where.value } : {}),
    },
  };
}

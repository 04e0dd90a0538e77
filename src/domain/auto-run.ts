/**
 * Which groups auto-run, and what an edit re-arms. A group auto-runs on a row when it is
 * `autoRun`, names at least one dependency, every dependency is non-empty (false counts
 * as empty: an unticked checkbox is an unmet dependency) and its cell is absent — never
 * run, or cleared by an edit. Absence is the whole rule, so auto-run never retries an
 * `error` or `cancelled` cell, never replaces one in flight and never re-runs a completed
 * group, even one whose outputs came back empty.
 */
import type { Group, TableSchema } from "@/contracts/table";
import { columnsRead, groupOrder, upstreamGroups } from "./table-schema";
import { isEmptyValue } from "./values";

/** Auto-run groups and their dependencies, keyed by group id. */
export function autoRunDependencies(
  schema: TableSchema,
  only?: ReadonlySet<string>,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const g of schema.groups) {
    if (g.autoRun && g.dependsOn.length > 0 && (!only || only.has(g.id))) out[g.id] = g.dependsOn;
  }
  return out;
}

export function dependenciesMet(group: Group, data: Record<string, unknown>): boolean {
  return group.dependsOn.length > 0 && group.dependsOn.every((c) => !isEmptyValue(data[c]));
}

/** The first group (dependency order) that auto-runs on this row now, if any. */
export function nextAutoGroup(
  schema: TableSchema,
  data: Record<string, unknown>,
  present: ReadonlySet<string>,
  exclude?: string,
): string | undefined {
  const byId = new Map(schema.groups.map((g) => [g.id, g]));
  return groupOrder(schema).find((id) => {
    const g = byId.get(id);
    return (
      g !== undefined && id !== exclude && g.autoRun && !present.has(id) && dependenciesMet(g, data)
    );
  });
}

/**
 * The auto-run groups a Stop of `held` groups leaves unheld on the rows it covers: those
 * neither stopped nor downstream of a stopped group (the hold of `store/cells/stamp.ts`).
 * The carrier of such a row may still stamp one once the stopped attempt ends; `null`
 * (a Stop of every group) holds them all.
 */
export function autoRunUnheld(schema: TableSchema, held: readonly string[] | null): string[] {
  if (held === null) return [];
  const stopped = new Set(held);
  return schema.groups
    .filter(
      (g) =>
        g.autoRun &&
        g.dependsOn.length > 0 &&
        !upstreamGroups(schema, g.id).some((id) => stopped.has(id)),
    )
    .map((g) => g.id);
}

/**
 * Auto-run groups an edit of `changed` columns re-arms: those reading a changed column, then,
 * left to right through output columns, those reading what the former write. Returns
 * them in dependency order with the output columns to clear (never a column the edit
 * itself set: the person's value wins).
 */
export function reArmedByEdit(
  schema: TableSchema,
  changed: readonly string[],
): { groupIds: string[]; clearColumns: string[] } {
  const dirty = new Set(changed);
  const hit = new Set<string>();
  const byId = new Map(schema.groups.map((g) => [g.id, g]));
  for (const id of groupOrder(schema)) {
    const g = byId.get(id);
    // Only auto-run groups re-arm: clearing a manual group's results would lose them.
    if (!g?.autoRun || !columnsRead(g).some((c) => dirty.has(c))) continue;
    hit.add(id);
    for (const o of g.outputs) dirty.add(o.columnId);
  }
  const edited = new Set(changed);
  const clearColumns = schema.groups
    .filter((g) => hit.has(g.id))
    .flatMap((g) => g.outputs.map((o) => o.columnId))
    .filter((c) => !edited.has(c));
  return { groupIds: groupOrder(schema).filter((id) => hit.has(id)), clearColumns };
}

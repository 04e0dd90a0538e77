/**
 * Parsed table schemas and workflow definitions, cached per process. Keys carry what
 * changes them (schema version; draft edit time or deployed version, read with every
 * cascade step), so a stale entry is never used: it is simply never looked up again.
 */
import type { Db } from "@db/client";
import { TableSchema } from "@/contracts/table";
import { WorkflowDefinition } from "@/contracts/workflow";
import { groupOrder } from "@/domain/table-schema";
import { workflowDefinition } from "@/store/engine-reads";

const LIMIT = 1_000;

class Lru<V> {
  private map = new Map<string, V>();
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, value: V): void {
    this.map.set(key, value);
    if (this.map.size > LIMIT) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
  }
}

const schemas = new Lru<TableSchema>();
const definitions = new Lru<WorkflowDefinition>();

export function tableSchemaOf(tableId: string, version: number, raw: unknown): TableSchema {
  const key = `${tableId}@${version}`;
  let schema = schemas.get(key);
  if (!schema) {
    schema = TableSchema.parse(raw);
    schemas.set(key, schema);
  }
  return schema;
}

const orders = new WeakMap<TableSchema, readonly string[]>();
const lastSeen = new Lru<{ schemaVersion: number; order: readonly string[] }>();

/** The order a row's groups run in; remembered as the table's latest known order. */
export function groupOrderOf(
  tableId: string,
  version: number,
  schema: TableSchema,
): readonly string[] {
  let order = orders.get(schema);
  if (!order) {
    order = groupOrder(schema);
    orders.set(schema, order);
  }
  lastSeen.set(tableId, { schemaVersion: version, order });
  return order;
}

/**
 * The group order of the table's last schema version seen here, for a claim made in the
 * same statement as the read (which claims nothing if the version moved on).
 */
export function lastGroupOrder(
  tableId: string,
): { schemaVersion: number; order: readonly string[] } | undefined {
  return lastSeen.get(tableId);
}

export type DefinitionLookup =
  | { ok: true; definition: WorkflowDefinition }
  | { ok: false; reason: "missing" | "not_deployed" | "invalid" };

export async function definitionOf(
  db: Db,
  workflowId: string,
  mode: "live" | "deployed",
  stamp: { updatedAt: string; deployed: number | null } | undefined,
): Promise<DefinitionLookup> {
  if (!stamp) return { ok: false, reason: "missing" };
  if (mode === "deployed" && stamp.deployed === null) return { ok: false, reason: "not_deployed" };
  const key =
    mode === "live" ? `${workflowId}@live:${stamp.updatedAt}` : `${workflowId}@v${stamp.deployed}`;
  const cached = definitions.get(key);
  if (cached) return { ok: true, definition: cached };
  const found = await workflowDefinition(db, workflowId, mode);
  if (!found) return { ok: false, reason: mode === "deployed" ? "not_deployed" : "missing" };
  const parsed = WorkflowDefinition.safeParse(found.definition);
  if (!parsed.success) return { ok: false, reason: "invalid" };
  // A deployed version is immutable; a draft is cached under the edit time we were told.
  if (mode === "deployed" && found.version !== stamp.deployed)
    return { ok: true, definition: parsed.data };
  definitions.set(key, parsed.data);
  return { ok: true, definition: parsed.data };
}

/**
 * Parsed table schemas and workflow definitions, cached per engine handle. Keys carry what
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

/**
 * The process's parsed schemas, group orders and workflow definitions: one per engine
 * handle (handle.ts), so nothing here is found by a module-level lookup.
 */
export class Definitions {
  private readonly schemas = new Lru<TableSchema>();
  private readonly definitions = new Lru<WorkflowDefinition>();
  private readonly orders = new WeakMap<TableSchema, readonly string[]>();
  private readonly lastSeen = new Lru<LastSeenSchema>();

  tableSchema(tableId: string, version: number, raw: unknown): TableSchema {
    const key = `${tableId}@${version}`;
    let schema = this.schemas.get(key);
    if (!schema) {
      schema = TableSchema.parse(raw);
      this.schemas.set(key, schema);
    }
    return schema;
  }

  /** The order a row's groups run in; remembered as the table's latest known order. */
  groupOrder(tableId: string, version: number, schema: TableSchema): readonly string[] {
    let order = this.orders.get(schema);
    if (!order) {
      order = groupOrder(schema);
      this.orders.set(schema, order);
    }
    this.lastSeen.set(tableId, { schemaVersion: version, order, schema });
    return order;
  }

  /**
   * The table's last schema version seen here, parsed, with its group order: for a claim
   * made in the same statement as the read (which claims nothing if the version moved on),
   * and for a read that leaves out a schema its caller already holds.
   */
  lastGroupOrder(tableId: string): LastSeenSchema | undefined {
    return this.lastSeen.get(tableId);
  }

  async definition(
    db: Db,
    workflowId: string,
    mode: "live" | "deployed",
    stamp: { updatedAt: string; deployed: number | null } | undefined,
  ): Promise<DefinitionLookup> {
    if (!stamp) return { ok: false, reason: "missing" };
    if (mode === "deployed" && stamp.deployed === null)
      return { ok: false, reason: "not_deployed" };
    const key =
      mode === "live"
        ? `${workflowId}@live:${stamp.updatedAt}`
        : `${workflowId}@v${stamp.deployed}`;
    const cached = this.definitions.get(key);
    if (cached) return { ok: true, definition: cached };
    const found = await workflowDefinition(db, workflowId, mode);
    if (!found) return { ok: false, reason: mode === "deployed" ? "not_deployed" : "missing" };
    const parsed = WorkflowDefinition.safeParse(found.definition);
    if (!parsed.success) return { ok: false, reason: "invalid" };
    // A deployed version is immutable; a draft is cached under the edit time we were told.
    if (mode === "deployed" && found.version !== stamp.deployed)
      return { ok: true, definition: parsed.data };
    this.definitions.set(key, parsed.data);
    return { ok: true, definition: parsed.data };
  }
}

export interface LastSeenSchema {
  schemaVersion: number;
  order: readonly string[];
  schema: TableSchema;
}

export type DefinitionLookup =
  | { ok: true; definition: WorkflowDefinition }
  | { ok: false; reason: "missing" | "not_deployed" | "invalid" };

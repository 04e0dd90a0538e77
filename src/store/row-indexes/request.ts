/**
 * A read asks for the indexes that would serve it (keys.ts). Invariants: one row per
 * (table, column, column type, kind), so concurrent asks record one index and only the
 * ask that inserted it has it built; a table holds at most ROW_INDEXES_PER_TABLE indexes
 * that are not failed (asks past that are refused, not evicting: an index in use stays,
 * and the count holds under concurrent asks because they take the table's advisory lock
 * and count in a statement after it); only tables with at least `minRows` rows get any.
 */
import { createHash } from "node:crypto";
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { RowIndexStatus } from "@/domain/statuses";
import { ROW_INDEXES_PER_TABLE, type RowIndexWant } from "./keys";

export interface RowIndexAsk {
  /** The wants whose index is ready, as `wantKey` strings. */
  ready: Set<string>;
  /** Names of the indexes this ask recorded: the caller has them built. */
  recorded: string[];
}

export const wantKey = (w: RowIndexWant): string => `${w.columnId}|${w.columnType}|${w.kind}`;

/** The index's name: a hash of its identity, so every process names it alike. */
export function rowIndexName(tableId: string, w: RowIndexWant): string {
  const h = createHash("md5")
    .update(`${tableId}\u0000${wantKey(w)}`)
    .digest("hex");
  return `rix_${h.slice(0, 24)}`;
}

export async function askRowIndexes(
  db: Db,
  tableId: string,
  wants: readonly RowIndexWant[],
  minRows: number,
): Promise<RowIndexAsk> {
  const ready = new Set<string>();
  if (wants.length === 0) return { ready, recorded: [] };
  // One read: the table's indexes and its maintained row count, so a small table (most
  // reads) costs nothing more than this.
  const [found] = await queryRows<{
    rows: number | null;
    known: { key: string; status: RowIndexStatus }[];
  }>(
    db,
    sql`select (select row_count from tables where id = ${tableId})::float8 as rows,
               coalesce((select json_agg(json_build_object('key', column_id || '|' || column_type || '|' || kind,
                                                           'status', status))
                           from row_indexes where table_id = ${tableId}), '[]'::json) as known`,
  );
  const known = found?.known ?? [];
  for (const k of known) if (k.status === "ready") ready.add(k.key);
  const seen = new Set(known.map((k) => k.key));
  const missing = [...new Map(wants.map((w) => [wantKey(w), w])).values()].filter(
    (w) => !seen.has(wantKey(w)),
  );
  if (missing.length === 0 || (found?.rows ?? 0) < minRows) return { ready, recorded: [] };
  const recorded = await db.transaction(async (tx) => {
    await tx.execute(
      sql`select pg_advisory_xact_lock(hashtext('row_indexes'), hashtext(${tableId}))`,
    );
    const names: string[] = [];
    for (const w of missing) {
      const inserted = await queryRows<{ name: string }>(
        tx,
        sql`insert into row_indexes (index_name, table_id, column_id, column_type, kind)
            select ${rowIndexName(tableId, w)}, ${tableId}, ${w.columnId}, ${w.columnType}, ${w.kind}::row_index_kind
             where (select row_count from tables where id = ${tableId}) >= ${minRows}
               and (select count(*) from row_indexes
                     where table_id = ${tableId} and status <> 'failed') < ${ROW_INDEXES_PER_TABLE}
            on conflict do nothing
            returning index_name as name`,
      );
      names.push(...inserted.map((i) => i.name));
    }
    return names;
  });
  return { ready, recorded };
}

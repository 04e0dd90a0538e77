/**
 * Inserts one record a table holds a capped number of (its schedules, its views).
 * Invariant: a table never holds more than `cap` of them. The cap is the insert's own
 * WHERE, and the table's row is locked (FOR NO KEY UPDATE, which row inserts' foreign-key
 * locks do not wait on) in a statement before it, so two creates at the cap minus one take
 * turns: the second insert's count runs on a snapshot taken after the first committed. A
 * count in the insert's statement alone would not do: both would count on snapshots from
 * before either inserted.
 */
import { type Db, queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";

/** The tables of records capped per table; each has a `table_id` column. */
type CappedTable = "schedules" | "saved_views";

export type CappedInsert<T> =
  | { ok: true; saved: T }
  | { ok: false; reason: "table_not_found" | "limit_reached" };

/**
 * `insertSelect` is an `insert into <of> (…) select <values>` without a WHERE; the cap's
 * WHERE and `returning id` are added here. `readBack` reads the saved record in the same
 * transaction (through the schema's columns: raw statements return timestamps as text).
 */
export async function insertUnderTableCap<T>(
  db: Db,
  capped: { workspaceId: string; tableId: string; of: CappedTable; cap: number },
  insertSelect: SQL,
  readBack: (tx: Db, id: string) => Promise<T | undefined>,
): Promise<CappedInsert<T>> {
  return db.transaction(async (tx) => {
    const locked = await queryRows<{ id: string }>(
      tx,
      sql`select id from tables
          where id = ${capped.tableId} and workspace_id = ${capped.workspaceId}
          for no key update`,
    );
    if (locked.length === 0) return { ok: false, reason: "table_not_found" };
    const [row] = await queryRows<{ id: string }>(
      tx,
      sql`${insertSelect}
          where (select count(*) from ${sql.identifier(capped.of)} where table_id = ${capped.tableId})
                < ${capped.cap}
          returning id`,
    );
    if (!row) return { ok: false, reason: "limit_reached" };
    const saved = await readBack(tx, row.id);
    if (saved === undefined) throw new Error(`${capped.of} insert returned nothing`);
    return { ok: true, saved };
  });
}

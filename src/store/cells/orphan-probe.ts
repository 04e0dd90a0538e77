/**
 * The cheap half of healing: are there `running` cells whose row lock no session holds?
 * A carrier holds its row's advisory lock for as long as it runs a cell, and Postgres
 * frees the lock when the carrier's session dies, so such a cell lost its worker. The
 * probe reads the in-flight cells only (the window's partial index) and pg_locks, so it
 * costs the cells in flight, not the table sizes. It can see a false orphan (the cells
 * are read from the statement's snapshot, pg_locks live: a carrier that finished in
 * between looks dead); the re-drive it triggers checks again under the row lock.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";

/**
 * The row lock's key computed in SQL (engine/lock-sessions.ts: the first 8 bytes of SHA-256
 * of `cascade:<table>:<row>`, signed), to compare with `heldRowLocks`.
 */
export const rowLockKeyOf = (tableId: SQL, rowId: SQL): SQL =>
  sql`('x' || left(encode(sha256(convert_to('cascade:' || ${tableId} || ':' || ${rowId}, 'UTF8')), 'hex'), 16))::bit(64)::bigint`;

/**
 * The bigint advisory keys sessions of this database hold now, as `k`: pg_locks shows
 * such a key with its high 32 bits in classid and its low 32 in objid.
 */
export const heldRowLocks = sql`select (l.classid::bigint << 32) | l.objid::bigint as k
            from pg_locks l
           where l.locktype = 'advisory' and l.granted and l.objsubid = 1
             and l.database = (select oid from pg_database where datname = current_database())`;

export async function runningWithoutLock(db: Db): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`with held as (${heldRowLocks})
        select count(*)::int as n from cells c
         where c.status = 'running'
           and not exists (select 1 from held where held.k = ${rowLockKeyOf(sql`c.table_id`, sql`c.row_id`)})`,
  );
  return row?.n ?? 0;
}

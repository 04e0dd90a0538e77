/**
 * The cheap half of healing: are there `running` cells whose row lock no session holds?
 * A carrier holds its row's advisory lock for as long as it runs a cell, and Postgres
 * frees the lock when the carrier's session dies, so such a cell lost its worker. The
 * probe reads the in-flight cells only (the window's partial index) and pg_locks, so it
 * costs the cells in flight, not the table sizes. It can see a false orphan (the cells
 * are read from the statement's snapshot, pg_locks live: a carrier that finished in
 * between looks dead); the re-drive it triggers checks again under the row lock.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";

/**
 * The row lock's key (engine/row-lock.ts: the first 8 bytes of SHA-256 of
 * `cascade:<table>:<row>`, signed), as pg_locks shows a bigint advisory key: the high
 * 32 bits in classid, the low 32 in objid.
 */
const rowLockKey = sql`('x' || left(encode(sha256(convert_to('cascade:' || c.table_id || ':' || c.row_id, 'UTF8')), 'hex'), 16))::bit(64)::bigint`;

export async function runningWithoutLock(db: Db): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`with held as (
          select (l.classid::bigint << 32) | l.objid::bigint as k
            from pg_locks l
           where l.locktype = 'advisory' and l.granted and l.objsubid = 1
             and l.database = (select oid from pg_database where datname = current_database())
        )
        select count(*)::int as n from cells c
         where c.status = 'running'
           and not exists (select 1 from held where held.k = ${rowLockKey})`,
  );
  return row?.n ?? 0;
}

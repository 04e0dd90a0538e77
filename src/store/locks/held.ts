import type { SessionClient } from "@db/client";

const HELD = `select coalesce(array_agg(((l.classid::bigint << 32) | l.objid::bigint)::text), '{}') as keys
  from pg_locks l
 where l.pid = pg_backend_pid() and l.locktype = 'advisory' and l.granted and l.objsubid = 1`;

/** The advisory lock keys (64-bit, as text) this session holds in Postgres. */
export async function heldLockKeys(client: SessionClient): Promise<Set<string>> {
  const res = await client.query(HELD);
  return new Set((res.rows[0]?.keys as string[] | undefined) ?? []);
}

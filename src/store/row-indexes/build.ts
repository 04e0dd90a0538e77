/**
 * Builds the recorded row indexes, one at a time, with `CREATE INDEX CONCURRENTLY`, so
 * reads and writes of `rows` go on meanwhile. Invariants: an index is built by the one
 * builder that claimed its row (pending, or building under a claim older than
 * BUILD_LEASE_MS: its builder died), so concurrent builders never build it twice; it is
 * `ready` only once its build returned (the index then valid); a failed build is recorded
 * with its error and the invalid index it left is dropped, and it is not tried again.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { ColumnType } from "@/contracts/table";
import type { RowIndexKind } from "@/domain/statuses";
import { createIndexSql } from "./keys";

/** A build claimed this long ago and still `building` is taken over (its process died). */
export const BUILD_LEASE_MS = 30 * 60_000;

interface Claimed {
  name: string;
  tableId: string;
  columnId: string;
  columnType: ColumnType;
  kind: RowIndexKind;
  startedAt: string;
  takeover: boolean;
}

/**
 * Claims the oldest buildable index: not of a table whose other index is being built (two
 * concurrent builds on one table only wait for each other, and can deadlock). Claims
 * take turns on an advisory lock, so each sees the claims committed before it.
 */
async function claimOne(db: Db): Promise<Claimed | null> {
  const lease = sql`${BUILD_LEASE_MS} * interval '1 millisecond'`;
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('row_indexes'), 0)`);
    const rows = await queryRows<Claimed>(
      tx,
      sql`with next as (
            select index_name, status = 'building' as takeover from row_indexes ri
             where (status = 'pending' or (status = 'building' and started_at < now() - ${lease}))
               and not exists (select 1 from row_indexes b
                                where b.table_id = ri.table_id and b.status = 'building'
                                  and b.started_at >= now() - ${lease})
             order by requested_at limit 1)
          update row_indexes ri set status = 'building', started_at = clock_timestamp()
            from next where ri.index_name = next.index_name
          returning ri.index_name as name, ri.table_id as "tableId", ri.column_id as "columnId",
                    ri.column_type as "columnType", ri.kind, ri.started_at::text as "startedAt",
                    next.takeover`,
    );
    return rows[0] ?? null;
  });
}

/** Drops an index by its checked name (concurrently: reads of `rows` go on). */
export async function dropRowIndex(db: Db, name: string): Promise<void> {
  if (!/^rix_[a-f0-9]{24}$/.test(name)) throw new Error(`not a row index name: ${name}`);
  await db.execute(sql.raw(`drop index concurrently if exists ${name}`));
}

async function ensureTrigram(db: Db): Promise<void> {
  try {
    await db.execute(sql`create extension if not exists pg_trgm`);
  } catch (err) {
    // Two first builds at once: one created it, the other's insert collided. Gone if so.
    const there = await queryRows<{ n: number }>(
      db,
      sql`select count(*)::int as n from pg_extension where extname = 'pg_trgm'`,
    );
    if ((there[0]?.n ?? 0) === 0) throw err;
  }
}

export interface BuildOutcome {
  name: string;
  tableId: string;
  ok: boolean;
  error?: string;
  ms: number;
}

/** Builds every pending index (at most `limit`), oldest ask first. */
export async function buildRowIndexes(
  db: Db,
  opts: { limit?: number; signal?: AbortSignal } = {},
): Promise<BuildOutcome[]> {
  const done: BuildOutcome[] = [];
  while (done.length < (opts.limit ?? 20) && !opts.signal?.aborted) {
    const c = await claimOne(db);
    if (!c) break;
    const t0 = performance.now();
    try {
      // A build that died left an invalid index under the name: `if not exists` would keep it.
      if (c.takeover) await dropRowIndex(db, c.name);
      if (c.kind === "trgm") await ensureTrigram(db);
      await db.execute(sql.raw(createIndexSql(c.name, c.tableId, c)));
      await db.execute(
        sql`update row_indexes set status = 'ready', ready_at = now(), error = null
             where index_name = ${c.name} and status = 'building' and started_at = ${c.startedAt}::timestamptz`,
      );
      done.push({ name: c.name, tableId: c.tableId, ok: true, ms: performance.now() - t0 });
    } catch (err) {
      // The driver's error is the cause: the wrapper's message is the statement.
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
      const error = cause instanceof Error ? cause.message : String(cause);
      await dropRowIndex(db, c.name).catch(() => undefined);
      await db.execute(
        sql`update row_indexes set status = 'failed', error = ${error.slice(0, 1000)}
             where index_name = ${c.name} and status = 'building' and started_at = ${c.startedAt}::timestamptz`,
      );
      done.push({ name: c.name, tableId: c.tableId, ok: false, error, ms: performance.now() - t0 });
    }
  }
  return done;
}

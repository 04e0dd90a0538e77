/**
 * Builds the recorded row indexes, one at a time, with `CREATE INDEX CONCURRENTLY`, so
 * reads and writes of `rows` go on meanwhile. Invariants: it runs only in the database's
 * one row-index maintainer (services/row-indexes.ts holds the maintainer's session lock
 * around every call): every row index is on the one Postgres table `rows`, where two
 * concurrent builds (or a build and a concurrent drop) wait for each other's snapshots and
 * deadlock, whichever Cellflow tables they serve. So a row still `building` when a
 * maintainer starts was left by one that died, and is built again from scratch; an index
 * is `ready` only once its build returned (the index then valid); a failed build is
 * recorded with its error and the invalid index it left is dropped, and it is not tried
 * again.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { ColumnType } from "@/contracts/table";
import type { RowIndexKind } from "@/domain/statuses";
import { createIndexSql } from "./keys";

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
 * Claims the oldest buildable index: pending, or `building` under a maintainer that died
 * (only the one live maintainer builds, and it calls this between its own builds).
 */
async function claimOne(db: Db): Promise<Claimed | null> {
  const rows = await queryRows<Claimed>(
    db,
    sql`with next as (
          select index_name, status = 'building' as takeover from row_indexes
           where status in ('pending', 'building')
           order by requested_at limit 1)
        update row_indexes ri set status = 'building', started_at = clock_timestamp()
          from next where ri.index_name = next.index_name and ri.status in ('pending', 'building')
        returning ri.index_name as name, ri.table_id as "tableId", ri.column_id as "columnId",
                  ri.column_type as "columnType", ri.kind, ri.started_at::text as "startedAt",
                  next.takeover`,
  );
  return rows[0] ?? null;
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

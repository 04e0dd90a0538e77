/**
 * The row index policy (docs/api.md "Row indexes"): a sort or filter on a table of at
 * least CELLFLOW_ROW_INDEX_MIN_ROWS rows records the indexes that would serve it and has
 * them built in the background (the local worker's maintenance runner at once, the
 * every-minute maintenance job otherwise); the read itself never waits for one, and uses
 * the ones that are ready. Schema edits and table deletions start a sweep that drops the
 * indexes of columns and tables that are gone.
 */
import type { Database } from "@db/client";
import type { TaskBackend } from "@/backends/port";
import { TASKS } from "@/backends/port";
import { Env } from "@/config/env";
import type { Logger } from "@/config/log";
import type { RowOrder } from "@/domain/row-order";
import type { TypedCondition } from "@/domain/where";
import { buildRowIndexes } from "@/store/row-indexes/build";
import { orderWants, type RowIndexWant, whereWants } from "@/store/row-indexes/keys";
import { askRowIndexes, wantKey } from "@/store/row-indexes/request";
import { hasRowIndexes, sweepRowIndexes } from "@/store/row-indexes/sweep";
import type { ServiceContext } from "./context";

/**
 * CELLFLOW_ROW_INDEX_MIN_ROWS as it is now, read per sorted or filtered read (one field's
 * parse, as the CSV import reads its limits per import), so a test can lower it.
 */
function rowIndexMinRows(): number {
  return Env.shape.CELLFLOW_ROW_INDEX_MIN_ROWS.parse(process.env.CELLFLOW_ROW_INDEX_MIN_ROWS);
}

/** Which ready indexes a read may be written for. */
export interface ReadyIndexes {
  /** The order's index is ready: the read walks it instead of sorting. */
  order: boolean;
}

/**
 * Records the indexes a read would use (a table big enough, slots left) and has the new
 * ones built; says which are ready now. Never fails the read: an error is logged.
 */
export async function indexesForRead(
  ctx: ServiceContext,
  tableId: string,
  order: RowOrder,
  where: readonly TypedCondition[],
): Promise<ReadyIndexes> {
  const byOrder = orderWants(order.column, order.dir);
  const wants: RowIndexWant[] = [...(byOrder ? [byOrder] : []), ...whereWants(where)];
  if (wants.length === 0) return { order: false };
  try {
    const asked = await askRowIndexes(ctx.db, tableId, wants, rowIndexMinRows());
    if (asked.recorded.length > 0) {
      ctx.log.info({ tableId, indexes: asked.recorded }, "row indexes recorded");
      await kick(ctx.backend, tableId);
    }
    return { order: byOrder !== null && asked.ready.has(wantKey(byOrder)) };
  } catch (err) {
    ctx.log.warn({ err, tableId }, "row indexes not asked for");
    return { order: false };
  }
}

/** After a table's schema changed or it was deleted: its retired indexes get dropped. */
export async function retireRowIndexes(ctx: ServiceContext, tableId: string): Promise<void> {
  try {
    if (await hasRowIndexes(ctx.db, tableId)) await kick(ctx.backend, tableId);
  } catch (err) {
    ctx.log.warn(
      { err, tableId },
      "row index sweep not started (the next maintenance run does it)",
    );
  }
}

async function kick(backend: TaskBackend, tableId: string): Promise<void> {
  await backend.enqueue([
    { task: TASKS.rowIndexes, payload: { tableId }, idempotencyKey: "row-indexes" },
  ]);
}

/** The maintainer's session lock: two int4 keys, a space apart from the row and stop locks. */
const MAINTAINER_LOCK = "select pg_try_advisory_lock(1667462004, hashtext('row_indexes')) as got";
const MAINTAINER_UNLOCK = "select pg_advisory_unlock(1667462004, hashtext('row_indexes'))";

/**
 * The job: drop the retired indexes, then build the recorded ones — in the database's one
 * maintainer at a time. Every row index is on the one Postgres table `rows`, where
 * concurrent builds (and a build and a drop) deadlock whatever tables they serve, so the
 * job holds a session advisory lock on a connection of its own throughout; a job that
 * does not get it does nothing (the holder builds every pending index before it lets go,
 * and the every-minute job takes what was asked after its last claim). The lock dies with
 * its session, so a maintainer that died frees it, and the next takes its half-built
 * index over.
 */
export async function maintainRowIndexes(
  database: Pick<Database, "db" | "pool">,
  log: Logger,
  signal?: AbortSignal,
): Promise<{ dropped: number; built: number; failed: number; busy: number }> {
  const session = await database.pool.connect();
  let broken = false;
  try {
    const got = (await session.query(MAINTAINER_LOCK)).rows[0]?.got === true;
    if (!got) return { dropped: 0, built: 0, failed: 0, busy: 1 };
    try {
      const { db } = database;
      const dropped = await sweepRowIndexes(db);
      const builds = await buildRowIndexes(db, signal ? { signal } : {});
      for (const b of builds) {
        if (b.ok)
          log.info({ tableId: b.tableId, index: b.name, ms: Math.round(b.ms) }, "row index built");
        else
          log.warn({ tableId: b.tableId, index: b.name, error: b.error }, "row index build failed");
      }
      return {
        dropped,
        built: builds.filter((b) => b.ok).length,
        failed: builds.filter((b) => !b.ok).length,
        busy: 0,
      };
    } finally {
      await session.query(MAINTAINER_UNLOCK).catch(() => {
        // A session that cannot unlock is destroyed below, which frees the lock.
        broken = true;
      });
    }
  } catch (err) {
    broken = true;
    throw err;
  } finally {
    session.release(broken);
  }
}

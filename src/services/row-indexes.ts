/**
 * The row index policy (docs/api.md "Row indexes"): a sort or filter on a table of at
 * least CELLFLOW_ROW_INDEX_MIN_ROWS rows records the indexes that would serve it and has
 * them built in the background (the local worker's maintenance runner at once, the
 * every-minute maintenance job otherwise); the read itself never waits for one, and uses
 * the ones that are ready. Schema edits and table deletions start a sweep that drops the
 * indexes of columns and tables that are gone.
 */
import type { Db } from "@db/client";
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

let minRows: { raw: string | undefined; value: number } | undefined;

function rowIndexMinRows(): number {
  const raw = process.env.CELLFLOW_ROW_INDEX_MIN_ROWS;
  if (minRows && minRows.raw === raw) return minRows.value;
  const value = Env.shape.CELLFLOW_ROW_INDEX_MIN_ROWS.parse(raw);
  minRows = { raw, value };
  return value;
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

/** The job: drop the retired indexes, then build the recorded ones. */
export async function maintainRowIndexes(
  db: Db,
  log: Logger,
  signal?: AbortSignal,
): Promise<{ dropped: number; built: number; failed: number }> {
  const dropped = await sweepRowIndexes(db);
  const builds = await buildRowIndexes(db, signal ? { signal } : {});
  for (const b of builds) {
    if (b.ok)
      log.info({ tableId: b.tableId, index: b.name, ms: Math.round(b.ms) }, "row index built");
    else log.warn({ tableId: b.tableId, index: b.name, error: b.error }, "row index build failed");
  }
  return {
    dropped,
    built: builds.filter((b) => b.ok).length,
    failed: builds.filter((b) => !b.ok).length,
  };
}

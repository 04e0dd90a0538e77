/**
 * A Run request: one dispatch row, set-based stamps in pages of rows (never a statement
 * per row), then the first window of carriers, enqueued only after the stamps committed.
 */
import type { Db } from "../../db/client";
import type { TaskBackend } from "../backends/port";
import { carrierSpec, stamperSpec } from "../backends/port";
import type { RunMode } from "../domain/statuses";
import { stampPage } from "../store/cells/stamp";
import { advanceDispatch } from "../store/dispatches/advance";
import { createDispatch } from "../store/dispatches/create";
import { setStamped } from "../store/dispatches/read";
import { continueStampingLater } from "../store/dispatches/stamp-next";

export const STAMP_PAGE_ROWS = 1_000;
/** Rows a Run request stamps before it returns; the rest is stamped by a background job. */
export const SYNC_STAMP_ROWS = 5_000;

export interface RunScope {
  tableId: string;
  groupIds: string[];
  mode: RunMode;
  rowIds: string[] | null;
  limit: number | null;
  window: number;
  /** Rows to stamp before returning (default SYNC_STAMP_ROWS); the rest goes to the background. */
  syncRows?: number;
  /** Benchmarks only: refill the window only once all of it finished. */
  scanline?: boolean;
  /** Auto-fire: per-group dependencies that must be met (see StampPage.dependsOn). */
  dependsOn?: Record<string, string[]>;
}

export async function startRun(
  db: Db,
  backend: TaskBackend,
  scope: RunScope,
): Promise<{ dispatchId: string; stamped: number; stamping: boolean }> {
  const run = await stampRun(db, scope);
  await launchRun(db, backend, scope.tableId, run.dispatchId);
  if (run.stamping)
    await backend.enqueue([stamperSpec({ tableId: scope.tableId, dispatchId: run.dispatchId })]);
  return run;
}

/** Creates the dispatch and stamps its cells; nothing runs until `launchRun`. */
export async function stampRun(
  db: Db,
  scope: RunScope,
): Promise<{ dispatchId: string; stamped: number; stamping: boolean }> {
  const dispatchId = await createDispatch(db, {
    tableId: scope.tableId,
    groupIds: scope.groupIds,
    mode: scope.mode,
    rowIds: scope.rowIds,
    rowLimit: scope.limit,
    window: scope.window,
    scanline: scope.scanline ?? false,
  });
  const syncRows = scope.syncRows ?? SYNC_STAMP_ROWS;
  let after = -1;
  let rows = 0;
  let cells = 0;
  for (;;) {
    const room =
      scope.limit === null ? STAMP_PAGE_ROWS : Math.min(STAMP_PAGE_ROWS, scope.limit - rows);
    if (room <= 0) break;
    if (rows >= syncRows) {
      // A large run: the request returns now and a background job stamps the rest.
      await continueStampingLater(db, dispatchId, { after, rows, cells });
      return { dispatchId, stamped: cells, stamping: true };
    }
    const page = await stampPage(db, { ...scope, dispatchId, afterPosition: after, maxRows: room });
    rows += page.rows;
    cells += page.cells;
    if (page.lastPosition === null) break;
    after = page.lastPosition;
  }
  await setStamped(db, dispatchId, cells);
  return { dispatchId, stamped: cells, stamping: false };
}

/** Hands the first window of rows to carriers (or completes a dispatch with nothing to do). */
export async function launchRun(
  db: Db,
  backend: TaskBackend,
  tableId: string,
  dispatchId: string,
): Promise<void> {
  const first = await advanceDispatch(db, dispatchId);
  await backend.enqueue(first.rowIds.map((rowId) => carrierSpec({ tableId, rowId, dispatchId })));
}

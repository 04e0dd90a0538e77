/**
 * A Run request: one dispatch row, set-based stamps in pages of rows (never a statement
 * per row), then the first window of carriers, enqueued only after the stamps committed.
 * Every page, the request's and the background job's, is the same locked step
 * (`stampNextPage`), so a Stop made while a run is stamping holds for the pages after it.
 * A request with an `Idempotency-Key` creates its dispatch in one transaction with the
 * key's record, so one key starts one run, and the answer to a repeat is that run.
 */
import type { Db } from "@db/client";
import type { TaskBackend } from "@/backends/port";
import { carrierSpec, stamperSpec } from "@/backends/port";
import type { RunMode } from "@/domain/statuses";
import type { TypedCondition } from "@/domain/where";
import { advanceDispatch } from "@/store/dispatches/advance";
import { createDispatch, type NewDispatch } from "@/store/dispatches/create";
import { stampNextPage } from "@/store/dispatches/stamp-next";
import { createKeyedDispatch } from "@/store/run-keys/create-keyed";
import type { RunKey, SeenRunKey } from "@/store/run-keys/find";
import { at, type Pause } from "./race-points";

export const STAMP_PAGE_ROWS = 1_000;
/** Rows a Run request stamps before it returns; the rest is stamped by a background job. */
export const SYNC_STAMP_ROWS = 5_000;

export interface RunScope {
  tableId: string;
  groupIds: string[];
  mode: RunMode;
  rowIds: string[] | null;
  /** Checked row filter conditions (null or absent: every row). */
  where?: TypedCondition[] | null;
  limit: number | null;
  window: number;
  /** Rows to stamp before returning (default SYNC_STAMP_ROWS); the rest goes to the background. */
  syncRows?: number;
  /** Rows per stamping page (default STAMP_PAGE_ROWS; tests make it small). */
  pageRows?: number;
  /** Benchmarks only: refill the window only once all of it finished. */
  scanline?: boolean;
  /** Auto-fire: per-group dependencies that must be met (see StampPage.dependsOn). */
  dependsOn?: Record<string, string[]>;
  /** The run's credit cap, checked by admission (null or absent: none). */
  maxCredits?: number | null;
  /** Error/cancelled cells start from their last execution's checkpoints (every page). */
  resume?: boolean;
}

export interface StartedRun {
  dispatchId: string;
  stamped: number;
  stamping: boolean;
}

export async function startRun(
  db: Db,
  backend: TaskBackend,
  scope: RunScope,
  pause?: Pause,
): Promise<StartedRun> {
  const held = { ...scope, window: heldWindow(backend, scope.window) };
  const dispatchId = await createDispatch(db, newDispatch(held));
  return runCreated(db, backend, held, dispatchId, pause);
}

/**
 * A run request with an `Idempotency-Key`: the key's record commits with the dispatch
 * (store/run-keys/create-keyed.ts), so once the run exists the key answers it, even if
 * this request fails afterwards (a crash before a page is stamped leaves a run `stamping`,
 * which the re-drive hands to the background stamper). A key used before answers `seen`
 * and starts nothing.
 */
export async function startKeyedRun(
  db: Db,
  backend: TaskBackend,
  scope: RunScope,
  key: RunKey & { requestDigest: string },
  pause?: Pause,
): Promise<{ kind: "started"; run: StartedRun } | { kind: "seen"; seen: SeenRunKey }> {
  const held = { ...scope, window: heldWindow(backend, scope.window) };
  const created = await createKeyedDispatch(db, newDispatch(held), key);
  if (!created.created) return { kind: "seen", seen: created.seen };
  return { kind: "started", run: await runCreated(db, backend, held, created.dispatchId, pause) };
}

/** Stamps a created run's first pages, then hands out its first window. */
async function runCreated(
  db: Db,
  backend: TaskBackend,
  scope: RunScope,
  dispatchId: string,
  pause?: Pause,
): Promise<StartedRun> {
  await at(pause, "run:created", { dispatchId });
  const run = await stampPages(db, scope, dispatchId, pause);
  await at(pause, "run:stamped", { dispatchId: run.dispatchId });
  await launchRun(db, backend, scope.tableId, run.dispatchId);
  await slideWindows(db, backend, scope.tableId, run.displaced);
  if (run.stamping)
    await backend.enqueue([stamperSpec({ tableId: scope.tableId, dispatchId: run.dispatchId })]);
  return { dispatchId: run.dispatchId, stamped: run.stamped, stamping: run.stamping };
}

/** A run's window, held to what the backend runs of one table at once. */
export function heldWindow(backend: TaskBackend, window: number): number {
  return Math.min(window, backend.tableConcurrency ?? window);
}

/**
 * Slides the windows of runs a page took cells from: the carriers that held their slots
 * may have left already, and nobody else would complete them or hand out what is next.
 */
export async function slideWindows(
  db: Db,
  backend: TaskBackend,
  tableId: string,
  dispatchIds: readonly string[],
): Promise<void> {
  for (const id of dispatchIds) {
    const next = await advanceDispatch(db, id);
    await backend.enqueue(
      next.rowIds.map((rowId) => carrierSpec({ tableId, rowId, dispatchId: id })),
    );
  }
}

function newDispatch(scope: RunScope): NewDispatch {
  return {
    tableId: scope.tableId,
    groupIds: scope.groupIds,
    mode: scope.mode,
    rowIds: scope.rowIds,
    rowLimit: scope.limit,
    window: scope.window,
    scanline: scope.scanline ?? false,
    ...(scope.dependsOn ? { dependsOn: scope.dependsOn } : {}),
    where: scope.where ?? null,
    maxCredits: scope.maxCredits ?? null,
    ...(scope.resume ? { resume: true } : {}),
  };
}

interface Stamped extends StartedRun {
  displaced: string[];
}

/** Creates the dispatch and stamps its cells; nothing runs until `launchRun`. */
export async function stampRun(db: Db, scope: RunScope, pause?: Pause): Promise<Stamped> {
  const dispatchId = await createDispatch(db, newDispatch(scope));
  await at(pause, "run:created", { dispatchId });
  return stampPages(db, scope, dispatchId, pause);
}

/** The pages a run request stamps itself (its first `syncRows` rows). */
async function stampPages(
  db: Db,
  scope: RunScope,
  dispatchId: string,
  pause?: Pause,
): Promise<Stamped> {
  const syncRows = scope.syncRows ?? SYNC_STAMP_ROWS;
  const pageRows = scope.pageRows ?? STAMP_PAGE_ROWS;
  let rows = 0;
  let cells = 0;
  const displaced = new Set<string>();
  for (;;) {
    // A large run: the request returns now and a background job stamps the rest.
    if (rows >= syncRows)
      return { dispatchId, stamped: cells, stamping: true, displaced: [...displaced] };
    await at(pause, "run:page", { dispatchId });
    const page = await stampNextPage(db, dispatchId, pageRows);
    rows += page.rows;
    cells += page.cells;
    for (const id of page.displaced) displaced.add(id);
    // Done, or stopped: a Stop of the whole run ended its stamping.
    if (!page.more)
      return { dispatchId, stamped: cells, stamping: false, displaced: [...displaced] };
  }
}

/** Hands the first window of rows to carriers (or completes a dispatch with nothing to do). */
export async function launchRun(
  db: Db,
  backend: TaskBackend,
  tableId: string,
  dispatchId: string,
): Promise<void> {
  await slideWindows(db, backend, tableId, [dispatchId]);
}

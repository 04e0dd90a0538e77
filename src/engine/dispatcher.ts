/**
 * A Run request: one dispatch row, set-based stamps in pages of rows (never a statement
 * per row), then the first window of carriers, never before the stamps commit: where the
 * backend's jobs live in the engine's database, they are enqueued in the transaction of
 * the request's last page (they exist only if it commits, and a Stop waiting for the
 * dispatch row finds them with their cells); elsewhere, after that commit.
 * Every page, the request's and the background job's, is the same locked step
 * (`stampNextPage`), so a Stop made while a run is stamping holds for the pages after it.
 * A request with an `Idempotency-Key` creates its dispatch in one transaction with the
 * key's record, so one key starts one run, and the answer to a repeat is that run.
 * Each verb takes the request side's handle (`RequestEngine`: the database, the backend,
 * the race points) and its own request; the background stamper passes the database and
 * backend of its worker's engine.
 * Each run has a span (a child of the request's, when a request started it) around its
 * creation and its first pages; its `traceparent` is kept on the dispatch row, so every
 * carrier of the run, in whatever process, links its own trace to it.
 */
import type { Db } from "@db/client";
import type { TaskBackend } from "@/backends/port";
import { carrierSpec, stamperSpec } from "@/backends/port";
import type { RunMode } from "@/domain/statuses";
import type { TypedCondition } from "@/domain/where";
import { advanceDispatch } from "@/store/dispatches/advance";
import {
  createAutoFireDispatch,
  createDispatch,
  type NewDispatch,
} from "@/store/dispatches/create";
import { type StampProgress, stampNextPage } from "@/store/dispatches/stamp-next";
import { createKeyedDispatch } from "@/store/run-keys/create-keyed";
import type { RunKey, SeenRunKey } from "@/store/run-keys/find";
import { activeTraceparent, type Span, withSpan } from "@/tracing/spans";
import type { RequestEngine } from "./handle";
import { at } from "./race-points";

export const STAMP_PAGE_ROWS = 1_000;
/** Rows a Run request stamps before it returns; the rest is stamped by a background job. */
export const SYNC_STAMP_ROWS = 5_000;

export interface RunScope {
  tableId: string;
  groupIds: string[];
  mode: RunMode;
  rowIds: string[] | null;
  /**
   * Only rows placed after this position (absent: from the first row): a CSV import's
   * run starts at its first row, which no row ids could name by the million.
   */
  afterPosition?: number;
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
  /** The run's per-row budget, checked by admission (null or absent: the table's default). */
  maxCreditsPerRow?: number | null;
  /** Error/cancelled cells start from their last execution's checkpoints (every page). */
  resume?: boolean;
  /** Mode `stale`: completed cells that ended more than this many hours before the run. */
  staleAfterHours?: number | null;
}

export interface StartedRun {
  dispatchId: string;
  stamped: number;
  stamping: boolean;
}

export function startRun(engine: RequestEngine, scope: RunScope): Promise<StartedRun> {
  return inRunSpan(scope, async (span) => {
    const held = { ...scope, window: heldWindow(engine.backend, scope.window) };
    const dispatchId = await createDispatch(engine.db, newDispatch(held));
    span.setAttribute("cellflow.run.id", dispatchId);
    return runCreated(engine, held, dispatchId);
  });
}

/** The run's span around `fn`: the dispatch it creates keeps the span's traceparent. */
function inRunSpan<T>(scope: RunScope, fn: (span: Span) => Promise<T>): Promise<T> {
  return withSpan(
    "run",
    () => ({
      "cellflow.table.id": scope.tableId,
      "cellflow.group.ids": scope.groupIds,
      "cellflow.run.mode": scope.mode,
    }),
    fn,
  );
}

/** A run request with its `Idempotency-Key` (and the digest of the request it came with). */
export interface KeyedRun {
  scope: RunScope;
  key: RunKey & { requestDigest: string };
}

/**
 * A run request with an `Idempotency-Key`: the key's record commits with the dispatch
 * (store/run-keys/create-keyed.ts), so once the run exists the key answers it, even if
 * this request fails afterwards (a crash before a page is stamped leaves a run `stamping`,
 * which the re-drive hands to the background stamper). A key used before answers `seen`
 * and starts nothing.
 */
export function startKeyedRun(
  engine: RequestEngine,
  request: KeyedRun,
): Promise<{ kind: "started"; run: StartedRun } | { kind: "seen"; seen: SeenRunKey }> {
  const { scope, key } = request;
  return inRunSpan(scope, async (span) => {
    const held = { ...scope, window: heldWindow(engine.backend, scope.window) };
    const created = await createKeyedDispatch(engine.db, newDispatch(held), key);
    if (!created.created) return { kind: "seen", seen: created.seen };
    span.setAttribute("cellflow.run.id", created.dispatchId);
    return { kind: "started", run: await runCreated(engine, held, created.dispatchId) };
  });
}

/** Stamps a created run's first pages, then hands out its first window. */
async function runCreated(
  engine: RequestEngine,
  scope: RunScope,
  dispatchId: string,
): Promise<StartedRun> {
  const { pause } = engine;
  const { tableId } = scope;
  await at(pause, "run:created", { dispatchId });
  const run = await stampPages(engine, scope, dispatchId, engine.backend);
  await at(pause, "run:stamped", { dispatchId: run.dispatchId });
  return launchStamped(engine, { tableId, run });
}

/**
 * Hands out a stamped run's first window, the windows of the runs its pages took cells
 * from, and its background stamping: only once its stamps committed (a caller that
 * stamped in its own transaction, `stampRun`, calls it after that commit).
 */
export async function launchStamped(
  engine: Pick<RequestEngine, "db" | "backend">,
  request: { tableId: string; run: Stamped },
): Promise<StartedRun> {
  const { tableId, run } = request;
  if (!run.launched) await launchRun(engine, { tableId, dispatchId: run.dispatchId });
  await slideWindows(engine, { tableId, dispatchIds: run.displaced });
  if (run.stamping)
    await engine.backend.enqueue([stamperSpec({ tableId, dispatchId: run.dispatchId })]);
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
  engine: Pick<RequestEngine, "db" | "backend">,
  request: { tableId: string; dispatchIds: readonly string[] },
): Promise<void> {
  const { db, backend } = engine;
  const { tableId, dispatchIds } = request;
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
    ...(scope.afterPosition === undefined ? {} : { stampAfter: scope.afterPosition }),
    rowLimit: scope.limit,
    window: scope.window,
    scanline: scope.scanline ?? false,
    ...(scope.dependsOn ? { dependsOn: scope.dependsOn } : {}),
    where: scope.where ?? null,
    maxCredits: scope.maxCredits ?? null,
    maxCreditsPerRow: scope.maxCreditsPerRow ?? null,
    ...(scope.resume ? { resume: true } : {}),
    staleAfterHours: scope.staleAfterHours ?? null,
    traceContext: activeTraceparent(),
  };
}

export interface Stamped extends StartedRun {
  displaced: string[];
  /** Its first window was handed out in its last page's transaction (`stampPages`). */
  launched?: boolean;
}

/**
 * Creates the dispatch and stamps its cells; nothing runs until `launchRun` (so no
 * backend: in `engine.db`'s transaction when it is one).
 */
export function stampRun(
  engine: Pick<RequestEngine, "db" | "pause">,
  scope: RunScope,
): Promise<Stamped> {
  return inRunSpan(scope, async (span) => {
    const dispatchId = await createDispatch(engine.db, newDispatch(scope));
    span.setAttribute("cellflow.run.id", dispatchId);
    await at(engine.pause, "run:created", { dispatchId });
    return stampPages(engine, scope, dispatchId);
  });
}

/**
 * An auto-fire's `stampRun`: null, nothing created, while the table's auto-run switch is
 * off (store/dispatches/create.ts `createAutoFireDispatch`).
 */
export function stampAutoFireRun(
  engine: Pick<RequestEngine, "db" | "pause">,
  scope: RunScope,
): Promise<Stamped | null> {
  return inRunSpan(scope, async (span) => {
    const dispatchId = await createAutoFireDispatch(engine.db, newDispatch(scope));
    if (!dispatchId) return null;
    span.setAttribute("cellflow.run.id", dispatchId);
    await at(engine.pause, "run:created", { dispatchId });
    return stampPages(engine, scope, dispatchId);
  });
}

/**
 * The pages a run request stamps itself (its first `syncRows` rows). With a `backend`
 * that enqueues in a transaction, the last of them also hands out the run's first window
 * (`launched`): the stamp → running path saves the slide's and the enqueue's round trips
 * and commits.
 */
async function stampPages(
  engine: Pick<RequestEngine, "db" | "pause">,
  scope: RunScope,
  dispatchId: string,
  backend?: TaskBackend,
): Promise<Stamped> {
  const { db, pause } = engine;
  const syncRows = scope.syncRows ?? SYNC_STAMP_ROWS;
  const pageRows = scope.pageRows ?? STAMP_PAGE_ROWS;
  let rows = 0;
  let cells = 0;
  let launched = false;
  const displaced = new Set<string>();
  const launchWindowIn = backend?.launchWindowIn?.bind(backend);
  const launchIn = launchWindowIn
    ? async (tx: Db, page: StampProgress) => {
        // Not the request's last page: carriers start only once the request's pages are done.
        if (page.more && rows + page.rows < syncRows) return false;
        await launchWindowIn(tx, dispatchId, (rowId) =>
          carrierSpec({ tableId: scope.tableId, rowId, dispatchId }),
        );
        return true;
      }
    : undefined;
  for (;;) {
    // A large run: the request returns now and a background job stamps the rest.
    if (rows >= syncRows)
      return { dispatchId, stamped: cells, stamping: true, displaced: [...displaced], launched };
    await at(pause, "run:page", { dispatchId });
    const page = await stampNextPage(db, dispatchId, pageRows, launchIn);
    rows += page.rows;
    cells += page.cells;
    launched ||= page.after === true;
    for (const id of page.displaced) displaced.add(id);
    // Done, or stopped: a Stop of the whole run ended its stamping.
    if (!page.more)
      return { dispatchId, stamped: cells, stamping: false, displaced: [...displaced], launched };
  }
}

/** Hands the first window of rows to carriers (or completes a dispatch with nothing to do). */
export async function launchRun(
  engine: Pick<RequestEngine, "db" | "backend">,
  request: { tableId: string; dispatchId: string },
): Promise<void> {
  await slideWindows(engine, { tableId: request.tableId, dispatchIds: [request.dispatchId] });
}

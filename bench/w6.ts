/**
 * W6 (`BENCH_ONLY=w6 npm run bench`): the engine at a million rows, step by step, to find
 * where it breaks first (issue 33). On the bench's own server, in one database:
 *
 * 1. a table of `rows` rows (a number column `n`, a text column `t`, one no-op transform
 *    group) built in SQL as `insertRows` does (positions from the table's counter, moved
 *    in the same statement; the rows' counters through their triggers; the one `rows`
 *    event an insert appends is left out: it would list a million ids), and a CSV import
 *    of `importRows` rows through the import's service call (the route's), timed;
 * 2. a run over every row, started as `POST /runs` starts it (`startRun`), its background
 *    pages stamped by the stamper's own loop (`runStamper`) in this process, with a backend
 *    that carries nothing, so every cell stays queued: time until the request returns,
 *    until every cell is stamped, events per cell, database growth per row;
 * 3. a Stop by `where` of about 90 % of those rows, then a Stop of that run over the
 *    queued cells left (the cancel route's service call, `cancelRuns`): each one's time to
 *    answer; then until none is queued or running as reads show it, events written, and
 *    until the rewrite job (run here) has made every covered cell `cancelled` where stored;
 * 4. a full run on a second table of `runRows` rows with one `npm run worker` process
 *    (concurrency 50, window 50, as W1): cells/s, events per cell, extrapolated linearly
 *    to `rows` when smaller (the report says so);
 * 5. the grid's reads and 6. the export at `rows` rows (w6-reads.ts).
 *
 * Every step records the load average before and after and the RSS high-water mark of
 * each Node process over it (sampled each second); a step longer than `limitMs` is cut
 * off (its statements cancelled) and reported as where it broke.
 */
import { type Database, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { LocalBackend } from "@/backends/local";
import type { TaskBackend } from "@/backends/port";
import { log } from "@/config/log";
import { rewriteCovered } from "@/engine/covered-rewrite-loop";
import { startRun } from "@/engine/dispatcher";
import type { RequestEngine } from "@/engine/handle";
import { runStamper } from "@/engine/stamper";
import type { ServiceContext } from "@/services/context";
import { importCsv } from "@/services/csv-import";
import { cancelRuns } from "@/services/runs";
import { effectiveStatus } from "@/store/sql";
import { createTable } from "@/store/tables/create";
import { createWorkflow } from "@/store/workflows/create";
import { createWorkspace } from "@/store/workspaces/create";
import { type ScriptProcess, startWorkerProcess } from "../test/helpers/child-scripts";
import { benchDatabase, noop, waitForDispatch } from "./setup";
import { extrapolateMs, growthPer, perSecond, sizeGrowthPer } from "./w6-figures";
import { exportAll, gridReads } from "./w6-reads";
import {
  type Broke,
  eventCounts,
  isBroke,
  loadAverage,
  relationSizes,
  startRssSampler,
  withinLimit,
} from "./w6-watch";

export interface W6Options {
  rows: number;
  importRows: number;
  runRows: number;
  limitMs: number;
  /** The Stop's eager limit (the engine's default when absent). */
  stopEagerUpTo?: number;
  say: (line: string) => void;
}

/** Carries nothing: the run's cells stay queued for the Stop. */
const idle: TaskBackend = {
  kind: "local",
  remoteCancel: false,
  enqueue: async () => {},
  cancelRun: async () => ({ ok: true, value: "gone" }),
  close: async () => {},
};

async function w6Table(database: Database, workspaceId: string, name: string): Promise<string> {
  const db = database.db;
  const wf = await createWorkflow(db, workspaceId, { name: `${name}-noop`, definition: noop("v") });
  const table = await createTable(db, workspaceId, {
    name,
    schema: {
      columns: [
        { id: "n", name: "n", type: "number" },
        { id: "t", name: "t", type: "text" },
        { id: "a", name: "a", type: "json" },
      ],
      groups: [
        {
          id: "ga",
          name: "ga",
          kind: "workflow",
          workflowId: wf.id,
          version: "live",
          inputs: {},
          outputs: [{ columnId: "a", from: "v" }],
          dependsOn: [],
          autoRun: false,
        },
      ],
    },
  });
  return table.id;
}

/**
 * `rows` rows at the end of the table, in one statement, positions and `row_count` moved as
 * `insertRows` moves them (the plan's cap is not judged: the bench's table may pass it).
 */
async function fillTable(database: Database, tableId: string, rows: number): Promise<void> {
  await database.db.execute(
    sql`with pos as (
          update tables set next_position = next_position + ${rows},
                            row_count = row_count + ${rows}
           where id = ${tableId}
          returning next_position - ${rows} as start)
        insert into rows (id, table_id, position, data)
        select 'row_w6_' || ${tableId} || '_' || i, ${tableId}, pos.start + i - 1,
               jsonb_build_object('n', (i::bigint * 7919) % 1000003, 't', md5(i::text))
          from pos, generate_series(1, ${rows}) i`,
  );
  await database.db.execute(sql`analyze rows`);
}

async function countOpen(
  database: Database,
  tableId: string,
  as: "read" | "stored" = "read",
): Promise<number> {
  // As reads show them (a queued cell a large Stop's scope covers is cancelled), or as stored.
  const status = as === "read" ? effectiveStatus("c") : sql`c.status`;
  const [r] = await queryRows<{ n: number }>(
    database.db,
    sql`select count(*)::int as n from cells c where c.table_id = ${tableId} and ${status} in ('queued', 'running')`,
  );
  return r?.n ?? 0;
}

type Step = Record<string, unknown>;

/** What every step gets: the database, the request-side context (carrying nothing), the options. */
interface W6Env {
  url: string;
  database: Database;
  ctx: ServiceContext;
  o: W6Options;
  /** The million-row table. */
  tableId: string;
}

/** 1. The rows by SQL. */
async function build(e: W6Env): Promise<Step> {
  const { database, o } = e;
  const sizes = await relationSizes(database);
  const t0 = performance.now();
  await fillTable(database, e.tableId, o.rows);
  const ms = performance.now() - t0;
  const grew = sizeGrowthPer(sizes, await relationSizes(database), o.rows);
  o.say(`W6 build: ${o.rows} rows by SQL in ${Math.round(ms)} ms; ${grew.rows} bytes/row in rows`);
  return { ms: Math.round(ms), bytesPerRow: grew };
}

/** 1. The CSV import through its service call, into a table of its own. */
async function importRows(e: W6Env): Promise<Step> {
  const { database, ctx, o } = e;
  const importTable = await w6Table(database, ctx.workspaceId, "w6-import");
  const file = csvParts(o.importRows);
  const t0 = performance.now();
  const r = await importCsv(ctx, importTable, file.parts);
  const ms = performance.now() - t0;
  if (!r.ok) throw new Error(`import refused: ${JSON.stringify(r.reason)}`);
  o.say(
    `W6 import: ${r.value.inserted} rows (${file.chars()} bytes of CSV) in ${Math.round(ms)} ms`,
  );
  return { rows: r.value.inserted, csvBytes: file.chars(), ms: Math.round(ms) };
}

/** A CSV file of `rows` rows as parts of about 64 KiB, made as the import reads them. */
function csvParts(rows: number): { parts: AsyncIterable<string>; chars: () => number } {
  let chars = 0;
  async function* parts(): AsyncGenerator<string> {
    let part = "n,t\n";
    for (let i = 1; i <= rows; i++) {
      part += `${i},name ${i}\n`;
      if (part.length < 64 * 1024 && i < rows) continue;
      chars += part.length;
      yield part;
      part = "";
    }
  }
  return { parts: parts(), chars: () => chars };
}

/** 2. A run over every row, stamped, nothing carried. */
async function stamp(e: W6Env): Promise<Step> {
  const { database, o, tableId } = e;
  const db = database.db;
  const sizes = await relationSizes(database);
  const events = await eventCounts(database);
  const t0 = performance.now();
  const run = await startRun(
    { db, backend: idle },
    { tableId, groupIds: ["ga"], mode: "all", rowIds: null, limit: null, window: 50 },
  );
  const returnedMs = performance.now() - t0;
  let cells = run.stamped;
  if (run.stamping) {
    cells += await runStamper(
      { database, backend: idle },
      { tableId, dispatchId: run.dispatchId },
      { runId: "w6", signal: new AbortController().signal },
    );
  }
  const stampedMs = performance.now() - t0;
  const queued = await countOpen(database, tableId);
  const after = await eventCounts(database);
  const grew = sizeGrowthPer(sizes, await relationSizes(database), o.rows);
  const perCell = growthPer(events.total ?? 0, after.total ?? 0, cells);
  o.say(
    `W6 stamp: startRun returned in ${Math.round(returnedMs)} ms (${run.stamped} cells); all ${cells} stamped after ${Math.round(stampedMs)} ms (${perSecond(cells, stampedMs).toFixed(0)} cells/s), ${queued} queued; ${perCell.toFixed(2)} events per cell; +${grew.total} bytes/row (cells ${grew.cells}, events ${grew.events})`,
  );
  return {
    returnedMs: Math.round(returnedMs),
    stampedInRequest: run.stamped,
    stampedMs: Math.round(stampedMs),
    cells,
    queued,
    cellsPerSec: Math.round(perSecond(cells, stampedMs)),
    eventsPerCell: +perCell.toFixed(3),
    bytesPerRow: grew,
  };
}

/**
 * `n` is at least this on at least 90 % of the rows, scattered (`fillTable`'s `n` takes
 * distinct values in 0..1,000,002, so at most 100,000 fall below): the first Stop's `where`.
 */
const W6_STOP_WHERE_FROM = 100_000;

/**
 * 3. Stops over the queued cells (however far stamping got), as the cancel route makes
 * them: first one by `where` (n ≥ W6_STOP_WHERE_FROM: about 90 % of the rows, in short
 * stretches), then one of the whole run over the rest.
 */
async function stop(e: W6Env): Promise<Step> {
  const { database, ctx, o, tableId } = e;
  const whereQueued = await countOpen(database, tableId);
  const w0 = performance.now();
  const byWhere = await cancelRuns(ctx, tableId, {
    where: [{ column: "n", op: "gte", value: W6_STOP_WHERE_FROM }],
  });
  const whereMs = performance.now() - w0;
  if (!byWhere.ok) throw new Error("Stop by where refused");
  const queued = await countOpen(database, tableId);
  o.say(
    `W6 stop by where (n >= ${W6_STOP_WHERE_FROM}): ${whereQueued} queued; answered in ${Math.round(whereMs)} ms (${byWhere.value.cancelled} cancelled; ${queued} left open)`,
  );
  const events = await eventCounts(database);
  const t0 = performance.now();
  const r = await cancelRuns(ctx, tableId, {});
  const answeredMs = performance.now() - t0;
  if (!r.ok) throw new Error("Stop refused");
  const open = await countOpen(database, tableId);
  const noneOpenMs = performance.now() - t0;
  const after = await eventCounts(database);
  const written = (after.total ?? 0) - (events.total ?? 0);
  // The rewrite job a worker runs after a large Stop, here in this process, until it is done.
  const rewrite = await rewriteCovered({ db: database.db, backend: idle });
  const rewrittenMs = performance.now() - t0;
  const storedOpen = await countOpen(database, tableId, "stored");
  o.say(
    `W6 stop: ${queued} queued; answered in ${Math.round(answeredMs)} ms (${r.value.cancelled} cancelled); ${open} open as read after ${Math.round(noneOpenMs)} ms; ${written} events written; rewrite of ${rewrite.rewritten} covered cells done after ${Math.round(rewrittenMs)} ms (${storedOpen} stored open)`,
  );
  return {
    whereQueued,
    whereAnsweredMs: Math.round(whereMs),
    whereCancelled: byWhere.value.cancelled,
    queued,
    answeredMs: Math.round(answeredMs),
    cancelled: r.value.cancelled,
    openAfter: open,
    noneOpenMs: Math.round(noneOpenMs),
    eventsWritten: written,
    rewritten: rewrite.rewritten,
    rewrittenMs: Math.round(rewrittenMs),
    storedOpenAfterRewrite: storedOpen,
  };
}

/** 4. A full run through a worker process, on a table of its own. */
async function fullRun(e: W6Env, started: (worker: ScriptProcess) => void): Promise<Step> {
  const { database, o, url } = e;
  const db = database.db;
  const runTable = await w6Table(database, e.ctx.workspaceId, "w6-run");
  await fillTable(database, runTable, o.runRows);
  started(await startWorkerProcess({ DATABASE_URL: url, WORKER_CONCURRENCY: "50" }));
  const backend = new LocalBackend(url);
  const events = await eventCounts(database);
  const sizes = await relationSizes(database);
  const t0 = performance.now();
  try {
    const run = await startRun(
      { db, backend },
      { tableId: runTable, groupIds: ["ga"], mode: "all", rowIds: null, limit: null, window: 50 },
    );
    await waitForDispatch(database, run.dispatchId, 200);
  } finally {
    await backend.close();
  }
  const ms = performance.now() - t0;
  const after = await eventCounts(database);
  const grew = sizeGrowthPer(sizes, await relationSizes(database), o.runRows);
  const rate = perSecond(o.runRows, ms);
  const perCell = growthPer(events.total ?? 0, after.total ?? 0, o.runRows);
  const at = extrapolateMs(o.runRows, ms, o.rows);
  const smaller = o.runRows < o.rows;
  o.say(
    `W6 run: ${o.runRows} cells in ${Math.round(ms)} ms, ${rate.toFixed(0)} cells/s; ${perCell.toFixed(2)} events per cell; +${grew.total} bytes/row${smaller ? `; at ${o.rows} rows, extrapolated linearly: ${Math.round(at / 1000)} s` : ""}`,
  );
  return {
    cells: o.runRows,
    ms: Math.round(ms),
    cellsPerSec: Math.round(rate),
    eventsPerCell: +perCell.toFixed(3),
    bytesPerRow: grew,
    ...(smaller ? { extrapolatedMsAtRows: Math.round(at) } : {}),
  };
}

/** 5. The grid's reads on the million-row table. */
async function grid(e: W6Env): Promise<Step> {
  const { o } = e;
  const g = await gridReads(e.ctx, e.tableId, o.rows, o.limitMs);
  o.say(
    `W6 grid: first page ${g.firstPageMs} ms; every page in position order (the grid's last row) ${g.walk.pages} pages in ${g.walk.ms} ms${g.walk.complete ? "" : " (cut at the limit)"}, slowest page ${g.walk.slowestPageMs} ms; the last page alone by keyset ${g.lastPageKeysetMs} ms, by OFFSET ${g.lastPageOffsetMs} ms; sort on n ${g.sortNumber.firstPageMs} ms a page (whole walk ~${Math.round(g.sortNumber.walkEstimateMs / 1000)} s), on t ${g.sortText.firstPageMs} ms a page (~${Math.round(g.sortText.walkEstimateMs / 1000)} s); filter n < 1000 ${g.filterNumber.firstPageMs} ms (${g.filterNumber.rows} rows), t contains 'beef' ${g.filterText.firstPageMs} ms (${g.filterText.rows} rows); slowest: ${g.slowest}`,
  );
  for (const line of g.explain) o.say(`  ${line}`);
  return { ...g };
}

/** 6. The export of the million-row table, drained. */
async function exportStep(e: W6Env): Promise<Step> {
  const x = await exportAll(e.ctx, e.tableId);
  e.o.say(`W6 export: ${x.lines - 1} rows, ${x.bytes} bytes in ${x.ms} ms (streamed page by page)`);
  return x;
}

export async function w6(adminUrl: string, o: W6Options): Promise<Record<string, unknown>> {
  const { url, database } = await benchDatabase(adminUrl);
  const db = database.db;
  const rss = startRssSampler();
  const out: Record<string, unknown> = { rows: o.rows };
  const workers: ScriptProcess[] = [];
  /** Runs a step with its load averages and RSS high-water marks; a cut-off is kept as such. */
  const step = async (name: string, body: () => Promise<Step>): Promise<void> => {
    const loadBefore = loadAverage();
    rss.mark();
    const r: Step | Broke = await withinLimit(database, o.limitMs, body);
    out[name] = { ...r, loadBefore, loadAfter: loadAverage(), rssMiB: rss.span() };
    if (isBroke(r)) o.say(`W6 ${name}: BROKE after ${r.afterMs} ms (${r.error})`);
  };
  try {
    const ws = await createWorkspace(db, "w6", "unlimited");
    // The route's context, with the Stop's eager limit when the bench sets one (the Stop
    // reads it off the handle it is given, which this context is).
    const ctx: ServiceContext & Pick<RequestEngine, "stopEagerUpTo"> = {
      db,
      workspaceId: ws.id,
      log: log(),
      backend: idle,
      ...(o.stopEagerUpTo === undefined ? {} : { stopEagerUpTo: o.stopEagerUpTo }),
    };
    const e: W6Env = { url, database, ctx, o, tableId: await w6Table(database, ws.id, "w6") };
    await step("build", () => build(e));
    await step("import", () => importRows(e));
    await step("stamp", () => stamp(e));
    await step("stop", () => stop(e));
    await step("run", () =>
      fullRun(e, (worker) => {
        workers.push(worker);
        rss.addWorker("worker", worker.pid);
      }),
    );
    for (const w of workers.splice(0)) await w.kill("SIGTERM");
    await db.execute(sql`analyze`);
    await step("grid", () => grid(e));
    await step("export", () => exportStep(e));
    out.rssMiBOverall = rss.all();
    return out;
  } finally {
    rss.stop();
    for (const w of workers) await w.kill("SIGTERM");
    await database.close();
  }
}

/** The benchmark workloads; each checks its invariants and throws when one breaks. */

import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { Logger, makeWorkerUtils, run } from "graphile-worker";
import { LocalBackend } from "@/backends/local";
import { log } from "@/config/log";
import { sleep } from "@/domain/sleep";
import { runningAttempts } from "@/engine/cancellation";
import { startRun } from "@/engine/dispatcher";
import { stopRuns } from "@/engine/stop";
import { LONG_WAIT_MS } from "@/execution/blocks/basic";
import { startWorker } from "@/server/worker-runtime";
import { perCell } from "./figures";
import {
  benchDatabase,
  benchTable,
  checkTerminalOnce,
  commits,
  counter,
  noop,
  percentile,
  polls,
  printStatementProfile,
  startStatementProfile,
  startWaitSampler,
  waitForDispatch,
} from "./setup";

const silent = new Logger(() => () => {});

export async function peerJobsPerSec(
  adminUrl: string,
  jobs: number,
  concurrency: number,
): Promise<number> {
  const { url, database } = await benchDatabase(adminUrl);
  const utils = await makeWorkerUtils({ connectionString: url, logger: silent });
  await utils.migrate();
  let done = 0;
  let finish: () => void = () => {};
  const all = new Promise<void>((r) => {
    finish = r;
  });
  const runner = await run({
    connectionString: url,
    concurrency,
    maxPoolSize: concurrency + 2,
    noHandleSignals: true,
    logger: silent,
    taskList: {
      noop: async () => {
        done++;
        if (done === jobs) finish();
      },
    },
  });
  const started = performance.now();
  for (let i = 0; i < jobs; i += 1000) {
    await utils.addJobs(
      Array.from({ length: Math.min(1000, jobs - i) }, () => ({ identifier: "noop", payload: {} })),
    );
  }
  await all;
  const rate = jobs / ((performance.now() - started) / 1000);
  await runner.stop();
  await utils.release();
  await database.close();
  return rate;
}

export interface W1Result {
  cellsPerSec: number;
  roundTripsPerCell: number;
  commitsPerCell: number;
}

/** W1: rows × 2 chained no-op groups, one dispatch, one worker. */
export async function w1(
  adminUrl: string,
  rows: number,
  window: number,
  concurrency: number,
  profile?: (line: string) => void,
): Promise<W1Result> {
  const { url, database } = await benchDatabase(adminUrl);
  if (profile) await startStatementProfile(database);
  const tableId = await benchTable(
    database,
    ["a", "b"],
    [
      { id: "ga", definition: noop("v"), output: { columnId: "a", from: "v" } },
      { id: "gb", definition: noop("v"), inputs: { x: "a" }, output: { columnId: "b", from: "v" } },
    ],
    Array.from({ length: rows }, () => ({})),
  );
  const worker = await startWorker({ url, driver: "pg", concurrency, log: log() });
  const backend = new LocalBackend(url);
  const commitsBefore = await commits(database);
  const queriesBefore = counter.queries;
  const pollsBefore = polls.queries;
  const sampler = profile ? startWaitSampler(database) : undefined;
  const started = performance.now();
  const run = await startRun(
    { db: database.db, backend },
    {
      tableId,
      groupIds: ["ga", "gb"],
      mode: "all",
      rowIds: null,
      limit: null,
      window,
    },
  );
  await waitForDispatch(database, run.dispatchId);
  const secs = (performance.now() - started) / 1000;
  for (const line of (await sampler?.()) ?? []) profile?.(line);
  // Each poll is one query and one (read-only) commit of the benchmark's, not the engine's.
  const polled = polls.queries - pollsBefore;
  const queries = counter.queries - queriesBefore - polled;
  const committed = (await commits(database)) - commitsBefore - polled;
  if (profile) {
    await printStatementProfile(database, profile);
    // Where a row's time goes, from the cells' own timestamps (ms, p50 / p90).
    const [t] = await queryRows<Record<string, number>>(
      database.db,
      sql`with c as (
            select row_id, group_id, extract(epoch from started_at) * 1000 as s, extract(epoch from finished_at) * 1000 as f
              from cells where table_id = ${tableId}),
          r as (select a.f - a.s as run_a, b.s - a.f as gap, b.f - b.s as run_b, b.f - a.s as row_span
                  from c a join c b on a.row_id = b.row_id and a.group_id = 'ga' and b.group_id = 'gb')
          select percentile_cont(0.5) within group (order by run_a) as run_p50,
                 percentile_cont(0.9) within group (order by run_a) as run_p90,
                 percentile_cont(0.5) within group (order by gap) as gap_p50,
                 percentile_cont(0.9) within group (order by gap) as gap_p90,
                 percentile_cont(0.5) within group (order by row_span) as row_p50,
                 percentile_cont(0.9) within group (order by row_span) as row_p90
            from r`,
    );
    if (t)
      profile(
        `cell claim→finish p50 ${t.run_p50?.toFixed(1)} ms (p90 ${t.run_p90?.toFixed(1)}); finish→next claim p50 ${t.gap_p50?.toFixed(1)} ms (p90 ${t.gap_p90?.toFixed(1)}); a row's first claim→last finish p50 ${t.row_p50?.toFixed(1)} ms (p90 ${t.row_p90?.toFixed(1)})`,
      );
  }
  await checkTerminalOnce(database, tableId, rows * 2);
  // Every cell of the run, the background pages' too (run.stamped is the request's share).
  const [total] = await queryRows<{ stamped: number }>(
    database.db,
    sql`select stamped from dispatches where id = ${run.dispatchId}`,
  );
  const cells = total?.stamped ?? 0;
  if (cells !== rows * 2) throw new Error(`W1 stamped ${cells} cells, expected ${rows * 2}`);
  await worker.stop();
  await backend.close();
  await database.close();
  return perCell({ cells, seconds: secs, queries, commits: committed });
}

/** Stamp → running latency at low load: 50 single-cell rows, window 5. */
export async function stampToRunning(adminUrl: string): Promise<{ p50: number; p99: number }> {
  const { url, database } = await benchDatabase(adminUrl);
  const tableId = await benchTable(
    database,
    ["a"],
    [{ id: "ga", definition: noop("v"), output: { columnId: "a", from: "v" } }],
    [],
  );
  const worker = await startWorker({ url, driver: "pg", concurrency: 5, log: log() });
  const backend = new LocalBackend(url);
  const { insertRows } = await import("@/store/rows/insert");
  const latencies: number[] = [];
  for (let i = 0; i < 50; i++) {
    const rows = await insertRows(database.db, tableId, [{}]);
    const rowId = rows?.[0]?.id ?? "";
    const run = await startRun(
      { db: database.db, backend },
      {
        tableId,
        groupIds: ["ga"],
        mode: "all",
        rowIds: [rowId],
        limit: null,
        window: 5,
      },
    );
    await waitForDispatch(database, run.dispatchId, 2);
    const [c] = await queryRows<{ ms: number }>(
      database.db,
      sql`select extract(epoch from (started_at - queued_at)) * 1000 as ms from cells where row_id = ${rowId}`,
    );
    latencies.push(Number(c?.ms ?? 0));
  }
  await worker.stop();
  await backend.close();
  await database.close();
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** W2: POST /runs over many rows: request latency and time to the first running cell. */
export async function w2(
  adminUrl: string,
  rows: number,
): Promise<{ requestMs: number; firstRunningMs: number; stamped: number }> {
  const { url, database } = await benchDatabase(adminUrl);
  const tableId = await benchTable(
    database,
    ["a"],
    [
      {
        id: "ga",
        definition: { inputs: [], blocks: [{ id: "w", type: "wait", ms: 10 }] },
        output: { columnId: "a", from: "w" },
      },
    ],
    Array.from({ length: rows }, () => ({})),
  );
  const worker = await startWorker({ url, driver: "pg", concurrency: 20, log: log() });
  const backend = new LocalBackend(url);
  const started = performance.now();
  const run = await startRun(
    { db: database.db, backend },
    {
      tableId,
      groupIds: ["ga"],
      mode: "all",
      rowIds: null,
      limit: null,
      window: 50,
    },
  );
  const returned = performance.now();
  for (;;) {
    const [r] = await queryRows<{ n: number }>(
      database.db,
      sql`select count(*)::int as n from cells where dispatch_id = ${run.dispatchId} and started_at is not null`,
    );
    if ((r?.n ?? 0) > 0) break;
    await sleep(2);
  }
  const firstRunning = performance.now();
  await stopRuns({ db: database.db, backend }, { tableId, dispatchId: run.dispatchId });
  await worker.stop();
  await backend.close();
  await database.close();
  return {
    requestMs: returned - started,
    firstRunningMs: firstRunning - returned,
    stamped: run.stamped,
  };
}

/** W3: Stop with `running` cells in cancellable waits and `queued` more behind them. */
export async function w3(
  adminUrl: string,
  running: number,
  queued: number,
): Promise<{ noneInFlightMs: number; allStoppedMs: number; cancelled: number }> {
  const { url, database } = await benchDatabase(adminUrl);
  const tableId = await benchTable(
    database,
    ["a"],
    [
      {
        id: "ga",
        // Waits up to LONG_WAIT_MS run in the worker (longer ones pause the cell instead):
        // the running attempts a Stop must reach.
        definition: { inputs: [], blocks: [{ id: "w", type: "wait", ms: LONG_WAIT_MS }] },
        output: { columnId: "a", from: "w" },
      },
    ],
    Array.from({ length: running + queued }, () => ({})),
  );
  const worker = await startWorker({ url, driver: "pg", concurrency: running, log: log() });
  const backend = new LocalBackend(url);
  await startRun(
    { db: database.db, backend },
    {
      tableId,
      groupIds: ["ga"],
      mode: "all",
      rowIds: null,
      limit: null,
      window: running,
    },
  );
  while (runningAttempts() < running) await sleep(20);
  const started = performance.now();
  const stop = await stopRuns({ db: database.db, backend }, { tableId });
  const returned = performance.now();
  const [open] = await queryRows<{ n: number }>(
    database.db,
    sql`select count(*)::int as n from cells where table_id = ${tableId} and status in ('queued', 'running')`,
  );
  if ((open?.n ?? 1) !== 0)
    throw new Error(`invariant broken: ${open?.n} cells still in flight after Stop returned`);
  while (runningAttempts() > 0) await sleep(1);
  const allStopped = performance.now();
  await worker.stop();
  await backend.close();
  await database.close();
  return {
    noneInFlightMs: returned - started,
    allStoppedMs: allStopped - started,
    cancelled: stop.cancelled,
  };
}

/** Log-normal durations: median `medianMs`, capped. */
function heavyTail(n: number, medianMs: number, sigma: number, capMs: number): number[] {
  const out: number[] = [];
  let seed = 42;
  const rand = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return (seed + 1) / (2 ** 31 + 1);
  };
  for (let i = 0; i < n; i++) {
    const z = Math.sqrt(-2 * Math.log(rand())) * Math.cos(2 * Math.PI * rand());
    out.push(Math.min(capMs, Math.round(medianMs * Math.exp(sigma * z))));
  }
  return out;
}

/** W4: heavy-tailed cells, sliding window against the same dispatcher in scan-line mode. */
export async function w4(
  adminUrl: string,
  cells: number,
  window: number,
  scanline: boolean,
): Promise<{ cellsPerSec: number }> {
  const { url, database } = await benchDatabase(adminUrl);
  const tableId = await benchTable(
    database,
    ["d", "a"],
    [
      {
        id: "ga",
        definition: {
          inputs: [{ name: "d", type: "number", required: true }],
          blocks: [{ id: "w", type: "wait", ms: "inputs.d" }],
        },
        inputs: { d: "d" },
        output: { columnId: "a", from: "w" },
      },
    ],
    heavyTail(cells, 50, 1.2, 5_000).map((d) => ({ d })),
  );
  const worker = await startWorker({ url, driver: "pg", concurrency: window, log: log() });
  const backend = new LocalBackend(url);
  const started = performance.now();
  const run = await startRun(
    { db: database.db, backend },
    {
      tableId,
      groupIds: ["ga"],
      mode: "all",
      rowIds: null,
      limit: null,
      window,
      scanline,
    },
  );
  await waitForDispatch(database, run.dispatchId);
  const secs = (performance.now() - started) / 1000;
  await checkTerminalOnce(database, tableId, cells);
  await worker.stop();
  await backend.close();
  await database.close();
  return { cellsPerSec: cells / secs };
}

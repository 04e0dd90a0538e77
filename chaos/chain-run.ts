/**
 * One run of the chain workload (`workload.ts`) by real worker processes, with faults
 * injected while it runs, judged at the end by the shared invariants. The worker-kill
 * and Postgres-kill scenarios, their clean baselines and the smoke test all go through
 * here, so they measure the same thing the same way.
 */
import fs from "node:fs";
import type { Database, Db } from "@db/client";
import { LocalBackend } from "@/backends/local";
import { sleep } from "@/domain/sleep";
import { startRun } from "@/engine/dispatcher";
import type { Transition } from "./audit";
import type { InvariantReport } from "./invariants";
import { type ChainVerdict, judgeChain } from "./judge";
import { type Heal, RunMonitor } from "./monitor";
import { type Sink, startSink } from "./sink";
import { type UnexpectedExit, WorkerPool } from "./workers";
import { answerChain, chainTable, GROUPS } from "./workload";

export interface ChainOptions {
  url: string;
  database: Database;
  rows: number;
  workers: number;
  concurrency: number;
  redriveEveryMs: number;
  sinkMs: number;
  /** The billing provider's answer latency (default: the sink's). */
  providerMs?: number;
  timeoutMs: number;
  /** Extra environment for the workers. */
  env?: Record<string, string>;
  /** Runs on the new table before the workers start (a destination to send to, …). */
  prepare?: (db: Db, table: { tableId: string; workspaceId: string }) => Promise<void>;
  /** Injects the faults while the run goes on; resolves when it has injected them all. */
  faults?: (run: LiveRun) => Promise<void>;
}

/** What a fault injector gets: the run as it goes, and where to record what it did. */
export interface LiveRun {
  monitor: RunMonitor;
  pool: WorkerPool;
  cells: number;
  db: Db;
  backend: LocalBackend;
  tableId: string;
  /**
   * Records a fault at this instant (wall clock) and returns its record; set its
   * `wallEnd` once the system has recovered from it (the victim restarted, …).
   */
  fault(kind: string, detail?: Record<string, unknown>): FaultRecord;
}

export interface FaultRecord {
  kind: string;
  /** Wall clock of the fault and of its recovery, and ms since the run started. */
  wallAt: number;
  wallEnd?: number;
  atMs: number;
  /** Terminal cells when it landed. */
  progress: number;
  detail: Record<string, unknown>;
  heal?: FaultHeal;
}

export interface FaultHeal extends Heal {
  /** Cells running when the fault landed that were handed back by the re-drive. */
  orphans: number;
  /**
   * From the fault until the last of them was handed back (running → queued): how long
   * the dead worker's cells took to be found.
   */
  orphansRequeuedMs: number | null;
  /** From the fault until the last of them ran again: the exact time to heal. */
  orphansRerunMs: number | null;
  /** From the fault until the run ended. */
  runEndMs: number;
}

export interface ChainResult {
  cells: number;
  seconds: number;
  cellsPerSec: number;
  end: string;
  faults: FaultRecord[];
  invariants: InvariantReport;
  wrongOutputs: ChainVerdict["wrongOutputs"];
  outOfOrderEvidence: ChainVerdict["outOfOrderEvidence"];
  completedWithoutCall: number;
  completedWithoutCallSample: ChainVerdict["completedWithoutCallSample"];
  money: ChainVerdict["money"];
  moneyEvidence: ChainVerdict["moneyEvidence"];
  unexpectedExits: UnexpectedExit[];
  problems: string[];
}

export async function runChain(opts: ChainOptions): Promise<ChainResult> {
  const db = opts.database.db;
  const sink: Sink = await startSink(opts.sinkMs);
  answerChain(sink, opts.providerMs ?? opts.sinkMs);
  const backend = new LocalBackend(opts.url);
  const pool = new WorkerPool({
    DATABASE_URL: opts.url,
    WORKER_CONCURRENCY: String(opts.concurrency),
    CELLFLOW_REDRIVE_EVERY_MS: String(opts.redriveEveryMs),
    ...opts.env,
  });
  const cells = opts.rows * GROUPS.length;
  let monitor: RunMonitor | undefined;
  try {
    const table = await chainTable(db, sink.url, opts.rows);
    const { tableId } = table;
    await opts.prepare?.(db, table);
    await pool.start(opts.workers);
    const started = Date.now();
    const run = await startRun(
      { db: db, backend },
      {
        tableId,
        groupIds: [...GROUPS],
        mode: "all",
        rowIds: null,
        limit: null,
        window: opts.concurrency * opts.workers,
      },
    );
    const live = new RunMonitor(db, run.dispatchId);
    monitor = live;
    live.start();
    const faults: FaultRecord[] = [];
    const { end, seconds } = await runWithFaults(opts, started, faults, {
      monitor: live,
      pool,
      cells,
      db,
      backend,
      tableId,
    });
    return await judgeRun({ db, table, cells, sink, pool, live, faults, started, seconds, end });
  } finally {
    await monitor?.stop();
    // CHAOS_SAMPLES=<file>: the monitor's samples, for a post-mortem of a heal time.
    const samplesFile = process.env.CHAOS_SAMPLES;
    if (samplesFile && monitor) fs.writeFileSync(samplesFile, JSON.stringify(monitor.samples));
    await pool.stop();
    await backend.close();
    await sink.close();
  }
}

/** Lets the fault injector loose on the run and waits for the run's end; stops the monitor. */
async function runWithFaults(
  opts: ChainOptions,
  started: number,
  faults: FaultRecord[],
  run: Omit<LiveRun, "fault">,
): Promise<{ end: string; seconds: number }> {
  const live = run.monitor;
  const injecting = opts.faults?.({
    ...run,
    fault(kind, detail = {}) {
      const f: FaultRecord = {
        kind,
        wallAt: Date.now(),
        atMs: Date.now() - started,
        progress: live.last()?.terminal ?? 0,
        detail,
      };
      faults.push(f);
      return f;
    },
  });
  // A fault injector that throws is a broken harness, not a finding: surface it.
  let injectError: unknown;
  const injected = injecting?.catch((err: unknown) => {
    injectError = err;
  });
  const end = await live.waitForEnd(opts.timeoutMs);
  const seconds = (Date.now() - started) / 1000;
  await injected;
  if (injectError) throw injectError;
  // Carriers still finishing (a duplicate that found the row locked) write nothing more.
  await sleep(500);
  await live.stop();
  return { end, seconds };
}

/** The ended run judged by the shared invariants, each fault with its heal times. */
async function judgeRun(r: {
  db: Db;
  table: Awaited<ReturnType<typeof chainTable>>;
  cells: number;
  sink: Sink;
  pool: WorkerPool;
  live: RunMonitor;
  faults: FaultRecord[];
  started: number;
  seconds: number;
  end: string;
}): Promise<ChainResult> {
  const { cells, pool, live, faults, seconds, end } = r;
  // A worker that died by itself is a fault too, until its supervisor restarted it.
  const windows = [
    ...faults.map((f) => ({ start: f.wallAt, end: f.wallEnd ?? f.wallAt })),
    ...pool.unexpected.map((u) => ({ start: u.wallAt, end: u.restartedAt ?? Date.now() })),
  ];
  const verdict = await judgeChain(r.db, r.table, cells, r.sink, windows);
  const endWall = r.started + seconds * 1000;
  for (const [i, f] of faults.entries()) {
    const next = faults[i + 1];
    f.heal = {
      ...live.heal(f.wallAt - live.started, next ? next.wallAt - live.started : undefined),
      ...orphansOf(verdict.transitions, f.wallAt, next?.wallAt ?? Number.POSITIVE_INFINITY),
      runEndMs: endWall - f.wallAt,
    };
  }
  const problems = verdict.problems;
  if (end !== "completed") problems.push(`the run ended "${end}", not "completed"`);
  for (const u of pool.unexpected)
    problems.push(
      `worker slot ${u.slot} exited by itself at ${u.atMs} ms (code ${u.code}, signal ${u.signal})`,
    );
  return {
    cells,
    seconds,
    cellsPerSec: cells / seconds,
    end,
    faults,
    invariants: verdict.invariants,
    wrongOutputs: verdict.wrongOutputs,
    outOfOrderEvidence: verdict.outOfOrderEvidence,
    completedWithoutCall: verdict.completedWithoutCall,
    completedWithoutCallSample: verdict.completedWithoutCallSample,
    money: verdict.money,
    moneyEvidence: verdict.moneyEvidence,
    unexpectedExits: pool.unexpected,
    problems,
  };
}

/**
 * The cells a fault at `f` orphaned, from the audit: running at `f`, and handed back
 * (running → queued: the re-drive, or a worker shutting down) before the next fault.
 * Healed when each ran again (queued → running). Cells that were running elsewhere end
 * normally (running → completed) and are not counted.
 */
export function orphansOf(
  transitions: Transition[],
  f: number,
  nextFault: number,
): { orphans: number; orphansRequeuedMs: number | null; orphansRerunMs: number | null } {
  const byCell = new Map<string, Transition[]>();
  for (const t of transitions) {
    const k = `${t.rowId}/${t.groupId}`;
    const list = byCell.get(k);
    if (list) list.push(t);
    else byCell.set(k, [t]);
  }
  let orphans = 0;
  let latest = 0;
  let found = 0;
  for (const list of byCell.values()) {
    const before = list.filter((t) => t.at <= f).at(-1);
    if (before?.newStatus !== "running") continue;
    const after = list.filter((t) => t.at > f);
    const first = after[0];
    if (!first || first.at >= nextFault || first.newStatus !== "queued") continue;
    orphans++;
    found = Math.max(found, first.at - f);
    const again = after[1];
    latest = Math.max(latest, (again?.at ?? first.at) - f);
  }
  return {
    orphans,
    orphansRequeuedMs: orphans > 0 ? Math.round(found) : null,
    orphansRerunMs: orphans > 0 ? Math.round(latest) : null,
  };
}

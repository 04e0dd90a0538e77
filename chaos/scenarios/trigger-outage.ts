/**
 * Scenario 4, trigger.dev API outage: the chain workload carried by trigger.dev runs
 * (TASK_BACKEND=trigger's `TriggerBackend`) against the loopback fake of the API, whose
 * runs `test/helpers/trigger-platform.ts` executes in this process (what is real and what is
 * simulated is listed there). Mid-run the API answers 500 for `outageMs`, then 429 for
 * as long: the backend retries each call (~4 s of backoff) and then gives up, so the
 * carriers that finish a row cannot start the rows their window hands out, and the
 * re-drive's own enqueues fail until the API is back. No cell may be left queued: the
 * re-drive, once the API answers again, must carry every handed-out cell.
 */
import { createDatabase, type Database } from "@db/client";
import { TriggerBackend } from "@/backends/trigger";
import { log } from "@/config/log";
import { sleep } from "@/domain/sleep";
import { startRun } from "@/engine/dispatcher";
import { engineDeps } from "../../test/helpers/engine";
import { type FakeTrigger, startFakeTrigger } from "../../test/helpers/fake-trigger";
import { type PlatformStats, SimulatedTriggerPlatform } from "../../test/helpers/trigger-platform";
import type { InvariantReport } from "../invariants";
import { type ChainVerdict, judgeChain } from "../judge";
import { moneyLine } from "../money";
import { type Heal, RunMonitor } from "../monitor";
import { startSink } from "../sink";
import { answerChain, chainTable, GROUPS } from "../workload";

export interface TriggerOptions {
  url: string;
  database: Database;
  rows: number;
  /** Runs the simulated platform executes at once (the dispatch window is the same). */
  concurrency: number;
  redriveEveryMs: number;
  sinkMs: number;
  /** The billing provider's answer latency (default: the sink's). */
  providerMs?: number;
  timeoutMs: number;
  /** 500s for this long, then 429s for as long; 0: no outage (the baseline). */
  outageMs: number;
}

export interface TriggerResult {
  cells: number;
  seconds: number;
  outage: {
    atMs: number;
    progress: number;
    /** API calls answered 500 or 429 during it. */
    failedApiCalls: number;
    heal: Heal;
    /** From the end of the outage until no cell was stranded. */
    healedAfterOutageMs: number;
  } | null;
  platform: PlatformStats;
  invariants: InvariantReport;
  wrongOutputs: ChainVerdict["wrongOutputs"];
  outOfOrderEvidence: ChainVerdict["outOfOrderEvidence"];
  completedWithoutCall: number;
  completedWithoutCallSample: ChainVerdict["completedWithoutCallSample"];
  money: ChainVerdict["money"];
  moneyEvidence: ChainVerdict["moneyEvidence"];
  problems: string[];
  summary: string;
}

/** The API's outage as it happened: its wall-clock start and end, and the run's progress. */
interface ApiOutage {
  wall: number;
  end: number;
  progress: number;
  failedApiCalls: number;
}

export async function triggerOutage(opts: TriggerOptions): Promise<TriggerResult> {
  const db = opts.database.db;
  const sink = await startSink(opts.sinkMs);
  answerChain(sink, opts.providerMs ?? opts.sinkMs);
  const fake = await startFakeTrigger();
  // What TASK_BACKEND=trigger builds (src/backends/instance.ts), pointed at the fake.
  const backend = new TriggerBackend({
    accessToken: "tr_dev_chaos",
    baseURL: fake.url,
    log: log(),
    db,
  });
  // The carriers' own pool, sized like a worker's: each running carrier pins a connection.
  const carriers = createDatabase({
    url: opts.url,
    poolMax: opts.concurrency + 5,
    applicationName: "cellflow-chaos-trigger",
  });
  const platform = new SimulatedTriggerPlatform(
    fake,
    engineDeps({ database: carriers, backend, runtime: "trigger" }),
    opts.concurrency,
  );
  let monitor: RunMonitor | undefined;
  try {
    const table = await chainTable(db, sink.url, opts.rows);
    const { tableId } = table;
    platform.startSchedule(opts.redriveEveryMs);
    const started = Date.now();
    const run = await startRun(
      { db: db, backend },
      {
        tableId,
        groupIds: [...GROUPS],
        mode: "all",
        rowIds: null,
        limit: null,
        window: opts.concurrency,
      },
    );
    const live = new RunMonitor(db, run.dispatchId);
    monitor = live;
    live.start();
    const cells = opts.rows * GROUPS.length;
    const outage = opts.outageMs > 0 ? await apiOutageMidRun(opts, live, fake, cells) : null;
    const end = await live.waitForEnd(opts.timeoutMs);
    const seconds = (Date.now() - started) / 1000;
    await sleep(500);
    await live.stop();
    // No worker dies here: any repeated call is unexplained.
    const verdict = await judgeChain(db, table, cells, sink, []);
    if (end !== "completed") verdict.problems.push(`the run ended "${end}", not "completed"`);
    const outageReport = outage ? outageReportOf(outage, live, started) : null;
    return triggerResult(opts, { cells, seconds, outageReport, verdict, platform: platform.stats });
  } finally {
    await monitor?.stop();
    await platform.stop();
    await carriers.close();
    await fake.close();
    await sink.close();
  }
}

/** Once a quarter of the cells ended, the API answers 500 for `outageMs`, then 429 as long. */
async function apiOutageMidRun(
  opts: TriggerOptions,
  live: RunMonitor,
  fake: FakeTrigger,
  cells: number,
): Promise<ApiOutage | null> {
  await live.waitForTerminal(Math.floor(0.25 * cells), opts.timeoutMs);
  if (live.last()?.status !== "active") return null;
  const wall = Date.now();
  const before = fake.requests.length;
  const progress = live.last()?.terminal ?? 0;
  fake.outage(opts.outageMs, 500);
  await sleep(opts.outageMs);
  fake.outage(opts.outageMs, 429);
  await sleep(opts.outageMs);
  return { wall, end: Date.now(), progress, failedApiCalls: fake.requests.length - before };
}

function outageReportOf(
  outage: ApiOutage,
  live: RunMonitor,
  started: number,
): NonNullable<TriggerResult["outage"]> {
  const heal = live.heal(outage.wall - live.started);
  return {
    atMs: outage.wall - started,
    progress: outage.progress,
    failedApiCalls: outage.failedApiCalls,
    heal,
    healedAfterOutageMs: Math.max(0, outage.wall + heal.healMs - outage.end),
  };
}

function triggerResult(
  opts: TriggerOptions,
  r: {
    cells: number;
    seconds: number;
    outageReport: TriggerResult["outage"];
    verdict: ChainVerdict;
    platform: PlatformStats;
  },
): TriggerResult {
  const { cells, seconds, outageReport, verdict, platform: s } = r;
  const { invariants, problems } = verdict;
  const told = outageReport
    ? `API down ${((2 * opts.outageMs) / 1000).toFixed(0)} s (${outageReport.failedApiCalls} calls answered 500/429), ${s.failed} carrier runs failed, ${s.redriveFailures} re-drive passes failed; stranded up to ${outageReport.heal.peakStranded}, none left ${(outageReport.healedAfterOutageMs / 1000).toFixed(1)} s after the API came back`
    : "no outage";
  return {
    cells,
    seconds,
    outage: outageReport,
    platform: s,
    invariants,
    wrongOutputs: verdict.wrongOutputs,
    outOfOrderEvidence: verdict.outOfOrderEvidence,
    completedWithoutCall: verdict.completedWithoutCall,
    completedWithoutCallSample: verdict.completedWithoutCallSample,
    money: verdict.money,
    moneyEvidence: verdict.moneyEvidence,
    problems,
    summary: `${cells} cells in ${seconds.toFixed(1)} s; ${told}; lost ${invariants.lost}, illegal ${invariants.illegalTransitions}, duplicate calls ${invariants.duplicates?.extraCalls ?? 0}; ${moneyLine(verdict.money)}`,
  };
}

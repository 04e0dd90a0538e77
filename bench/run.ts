/**
 * `npm run bench`: the engine's workloads against its own embedded PostgreSQL (a temp
 * directory), with graphile-worker no-op jobs as the peer in the same run. Figures move
 * between runs on a shared 2-core machine: compare ratios, read medians and spreads.
 * See docs/benchmarks.md.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "@db/embedded";
import { freePort } from "../test/helpers/processes";
import { type ChartRun, w1Chart } from "./chart";
import { median, spread } from "./figures";
import { progressRead } from "./progress";
import {
  flatness,
  headline,
  type PairedRun,
  type SizePoint,
  sizePoint,
  w1Cells,
  w1Sizes,
} from "./sweep";
import { w5 } from "./w5";
import { w6 } from "./w6";
import { fullRunOf } from "./w6-figures";
import { w7 } from "./w7";
import { w8 } from "./w8";
import { peerJobsPerSec, stampToRunning, w1, w2, w3, w4 } from "./workloads";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const REPEAT = env("BENCH_REPEAT", 3);
// W1 repeats apart from BENCH_REPEAT: three runs at every size would triple the sweep's
// longest part, its largest size.
const W1_REPEAT = env("BENCH_W1_REPEAT", 1);
const CONCURRENCY = env("BENCH_CONCURRENCY", 50);
const W2_ROWS = env("BENCH_W2_ROWS", 100_000);
const W3_RUNNING = env("BENCH_W3_RUNNING", 1_000);
const W3_QUEUED = env("BENCH_W3_QUEUED", 10_000);
const W4_CELLS = env("BENCH_W4_CELLS", 2_000);
const W5_CELLS = env("BENCH_W5_CELLS", 2_000);
const W5_LIMIT = env("BENCH_W5_LIMIT", 50);
const PROGRESS_ROWS = env("BENCH_PROGRESS_ROWS", 1_000_000);
const PROGRESS_READS = env("BENCH_PROGRESS_READS", 500);
const PROGRESS_BACKLOG = env("BENCH_PROGRESS_BACKLOG", 500);
const W8_ROWS = env("BENCH_W8_ROWS", 2_000);
const W8_LIMIT = env("BENCH_W8_LIMIT", 25);
const W7_ROWS = env("BENCH_W7_ROWS", 5_000);
const W7_TPM = env("BENCH_W7_TPM", 300_000);
// Unset: the llm block leaves maxTokens unset (the default 1,024 reserved per call).
const W7_MAX_TOKENS = process.env.BENCH_W7_MAX_TOKENS
  ? Number(process.env.BENCH_W7_MAX_TOKENS)
  : undefined;
const W7_DELAY_MS = env("BENCH_W7_DELAY_MS", 0);
const W6_ROWS = env("BENCH_W6_ROWS", 1_000_000);
const W6_IMPORT_ROWS = env("BENCH_W6_IMPORT_ROWS", 100_000);
const W6_RUN_ROWS = env("BENCH_W6_RUN_ROWS", 200_000);
// The Stop's eager limit (engine default when unset): set it above the table to measure
// the Stop that rewrites every cell itself, as before its cancel scopes.
const W6_STOP_EAGER_UP_TO = process.env.BENCH_W6_STOP_EAGER_UP_TO
  ? Number(process.env.BENCH_W6_STOP_EAGER_UP_TO)
  : undefined;
// A step past this is cut off and reported as where W6 broke.
const W6_STEP_LIMIT_S = env("BENCH_W6_STEP_LIMIT_S", 900);

const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const sizes = checkedW1Sizes();
  const chart = process.env.BENCH_CHART;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-bench-"));
  fs.chmodSync(dir, 0o777);
  // BENCH_PROFILE=1: W1 also prints where Postgres spent its time, per statement.
  const profile = process.env.BENCH_PROFILE === "1";
  const server = await startBenchPostgres(dir, profile);
  // Interrupted: stop our Postgres (it runs in its own process group) and leave.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      void server.stop().finally(() => {
        fs.rmSync(dir, { recursive: true, force: true });
        process.exit(130);
      });
    });
  }
  const only = new Set((process.env.BENCH_ONLY ?? "w1,w2,w3,w4,w5,w8").split(","));
  const result: Record<string, unknown> = {};
  try {
    let w1Points: SizePoint[] = [];
    if (only.has("w1")) {
      const w1Result = await runW1(server.url, sizes, profile);
      w1Points = w1Result.sizes;
      result.w1 = w1Result;
      // Without W6 to add, written at once: a later workload's failure does not lose it.
      if (chart && !only.has("w6")) writeW1Chart(chart, w1Points, null);
    } else if (chart) say("BENCH_CHART: W1 is not in BENCH_ONLY, so there is no chart to write");
    if (only.has("w2")) result.w2 = await runW2(server.url);
    if (only.has("w3")) result.w3 = await runW3(server.url);
    if (only.has("w4")) result.w4 = await runW4(server.url);
    if (only.has("w5")) result.w5 = await runW5(server.url);
    // Not in the default set: building a million rows takes a minute of its own.
    if (only.has("progress")) result.progress = await runProgress(server.url);
    if (only.has("w8")) result.w8 = await runW8(server.url);
    // Not in the default set: two runs of about two minutes each at the tokens limit.
    if (only.has("w7")) result.w7 = await runW7(server.url);
    // Not in the default set: a million rows built, stamped, stopped, run, read, exported.
    if (only.has("w6"))
      result.w6 = await w6(server.url, {
        rows: W6_ROWS,
        importRows: W6_IMPORT_ROWS,
        runRows: Math.min(W6_RUN_ROWS, W6_ROWS),
        ...(W6_STOP_EAGER_UP_TO === undefined ? {} : { stopEagerUpTo: W6_STOP_EAGER_UP_TO }),
        limitMs: W6_STEP_LIMIT_S * 1000,
        say,
      });
    // With W6: written once it ran, its full run extending the sweep's axis.
    if (chart && w1Points.length > 0 && only.has("w6"))
      writeW1Chart(chart, w1Points, fullRunOf(result.w6));
    say("");
    say(JSON.stringify(result, null, 2));
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Bad knobs fail here, before a server is started for nothing. */
function checkedW1Sizes(): number[] {
  const sizes = w1Sizes(process.env.BENCH_W1_SIZES, process.env.BENCH_ROWS);
  if (!Number.isInteger(W1_REPEAT) || W1_REPEAT < 1) {
    throw new Error(`BENCH_W1_REPEAT must be a whole number ≥ 1, not ${W1_REPEAT}`);
  }
  if (process.env.BENCH_PEER_JOBS !== undefined) {
    say("BENCH_PEER_JOBS is ignored: the peer runs as many jobs as W1 runs cells at each size");
  }
  return sizes;
}

async function startBenchPostgres(dir: string, profile: boolean): Promise<EmbeddedPostgres> {
  return startEmbeddedPostgres({
    dataDir: dir,
    port: await freePort(),
    settings: {
      // W5's two worker processes at concurrency 50 each keep up to 2 × (55 + 52)
      // connections (their pools and graphile-worker's) on top of the bench's own.
      max_connections: "400",
      // BENCH_PG_SETTINGS='{"name":"value"}': try a server setting without editing code.
      ...(JSON.parse(process.env.BENCH_PG_SETTINGS ?? "{}") as Record<string, string>),
      ...(profile
        ? {
            shared_preload_libraries: "pg_stat_statements",
            "pg_stat_statements.track_planning": "on",
          }
        : {}),
    },
  });
}

/** W1 at every size, each run paired with the peer; the chart when BENCH_CHART names a file. */
async function runW1(
  url: string,
  sizes: number[],
  profile: boolean,
): Promise<{ sizes: SizePoint[] } & Record<string, unknown>> {
  const points: SizePoint[] = [];
  for (const rows of sizes) {
    const runs: PairedRun[] = [];
    for (let i = 0; i < W1_REPEAT; i++) {
      // The peer right before each engine run, at the job count of its cells: the ratio
      // compares the same amount of work under the same load on the machine.
      const p = await peerJobsPerSec(url, w1Cells(rows), CONCURRENCY);
      const e = await w1(url, rows, 50, CONCURRENCY, profile ? say : undefined);
      runs.push({ ...e, peerJobsPerSec: p });
      say(
        `W1 ${rows} rows, run ${i + 1}/${W1_REPEAT}: ${e.cellsPerSec.toFixed(0)} cells/s, peer ${p.toFixed(0)} jobs/s, ratio ${(e.cellsPerSec / p).toFixed(3)}; ${e.roundTripsPerCell.toFixed(2)} round trips, ${e.commitsPerCell.toFixed(2)} commits per cell`,
      );
    }
    points.push(sizePoint(rows, runs));
  }
  const flat = flatness(points);
  if (flat) {
    say(
      `W1 flatness: cells/s at ${flat.toRows} rows is ${(flat.share * 100).toFixed(0)}% of that at ${flat.fromRows} rows`,
    );
  }
  const latency = await stampToRunning(url);
  const head = headline(points);
  return {
    // The fields from before the sweep describe one size (10,000 rows when swept, else
    // the smallest), so readers of older results still find them where they were.
    rows: head.rows,
    cellsPerSec: head.cellsPerSec,
    peerJobsPerSec: head.peerJobsPerSec,
    ratio: head.ratio,
    roundTripsPerCell: head.roundTripsPerCell,
    commitsPerCell: head.commitsPerCell,
    stampToRunningMs: { p50: +latency.p50.toFixed(2), p99: +latency.p99.toFixed(2) },
    sizes: points,
    flatness: flat,
  };
}

function writeW1Chart(chart: string, points: SizePoint[], fullRun: ChartRun | null): void {
  const svg = w1Chart(
    points.map((p) => ({
      rows: p.rows,
      cellsPerSec: p.cellsPerSec.median,
      peerJobsPerSec: p.peerJobsPerSec.median,
    })),
    undefined,
    fullRun ? [fullRun] : [],
  );
  fs.mkdirSync(path.dirname(path.resolve(chart)), { recursive: true });
  fs.writeFileSync(chart, svg);
  say(`W1 chart (medians per size) written to ${chart}`);
}

async function runProgress(url: string): Promise<unknown> {
  const r = await progressRead(url, PROGRESS_ROWS, PROGRESS_READS, PROGRESS_BACKLOG);
  say(
    `progress at ${r.rows} rows (${r.unfoldedDeltas} unfolded deltas): GET /progress p50 ${r.progressMs.p50} ms, p99 ${r.progressMs.p99} ms; GET /runs/:id p50 ${r.runMs.p50} ms, p99 ${r.runMs.p99} ms (built in ${r.buildMs} ms); a one-cell update ${r.updateUs.withCounters} µs with the counters' trigger, ${r.updateUs.without} µs without`,
  );
  return r;
}

async function runW2(url: string): Promise<unknown> {
  const r = await w2(url, W2_ROWS);
  say(
    `W2: ${r.stamped} cells stamped; request ${r.requestMs.toFixed(0)} ms; first running ${r.firstRunningMs.toFixed(0)} ms later`,
  );
  return {
    rows: W2_ROWS,
    requestMs: Math.round(r.requestMs),
    firstRunningMs: Math.round(r.firstRunningMs),
  };
}

async function runW3(url: string): Promise<unknown> {
  const r = await w3(url, W3_RUNNING, W3_QUEUED);
  say(
    `W3: ${r.cancelled} cancelled; none in flight after ${r.noneInFlightMs.toFixed(0)} ms; every attempt stopped after ${r.allStoppedMs.toFixed(0)} ms`,
  );
  return {
    running: W3_RUNNING,
    queued: W3_QUEUED,
    noneInFlightMs: Math.round(r.noneInFlightMs),
    allStoppedMs: Math.round(r.allStoppedMs),
  };
}

async function runW4(url: string): Promise<unknown> {
  const sliding: number[] = [];
  const scan: number[] = [];
  for (let i = 0; i < Math.max(1, REPEAT - 1); i++) {
    sliding.push((await w4(url, W4_CELLS, 20, false)).cellsPerSec);
    scan.push((await w4(url, W4_CELLS, 20, true)).cellsPerSec);
    say(
      `W4 run ${i + 1}: sliding ${sliding.at(-1)?.toFixed(1)} cells/s, scan-line ${scan.at(-1)?.toFixed(1)} cells/s`,
    );
  }
  return {
    cells: W4_CELLS,
    window: 20,
    sliding: spread(sliding),
    scanline: spread(scan),
    ratio: +(median(sliding) / median(scan)).toFixed(2),
  };
}

/**
 * The same workload on each shared limiter: Redis for the scaled deploy, Postgres (the
 * default) for everything else.
 */
async function runW5(url: string): Promise<unknown> {
  const w5Runs: Record<string, unknown> = {};
  for (const limiter of ["postgres", "redis"] as const) {
    const r = await w5(url, W5_CELLS, W5_LIMIT, limiter);
    say(
      `W5 (${limiter}): ${r.cells} cells, provider calls granted at ${r.achievedPerSec.toFixed(2)}/s (${r.steadyPerSec.toFixed(2)}/s without the first and last second; limit ${r.limitPerSec}/s); at most ${r.maxInAnySecond} grants (${r.arrivalsMaxInAnySecond} arrivals) in any second; added wait p50 ${r.waitP50Ms} ms, p99 ${r.waitP99Ms} ms; ${r.seconds.toFixed(1)} s`,
    );
    w5Runs[limiter] = {
      ...r,
      achievedPerSec: +r.achievedPerSec.toFixed(2),
      steadyPerSec: +r.steadyPerSec.toFixed(2),
      withinFivePercent: Math.abs(r.achievedPerSec - r.limitPerSec) <= 0.05 * r.limitPerSec,
    };
  }
  return w5Runs;
}

/** A three-step waterfall: calls and credits against what it must make, rates against limits. */
async function runW8(url: string): Promise<unknown> {
  const r = await w8(url, W8_ROWS, W8_LIMIT);
  say(
    `W8: ${r.rows} rows in ${r.seconds} s; credits ${r.credits} (expected ${r.expectedCredits}, ratio ${r.creditsRatio})`,
  );
  for (const s of r.steps) {
    say(
      `W8 step ${s.step}: ${s.calls} calls (expected ${s.expectedCalls}), ${s.credits} credits (expected ${s.expectedCredits}); ${s.achievedPerSec}/s against a limit of ${s.limitPerSec}/s (at most ${s.maxInAnySecond} in any second)`,
    );
  }
  return r;
}

/** An AI column at a tokens-per-minute limit, on each shared limiter. */
async function runW7(url: string): Promise<unknown> {
  const runs: Record<string, unknown> = {};
  const limiters = (process.env.BENCH_W7_LIMITERS ?? "postgres,redis").split(",");
  for (const limiter of ["postgres", "redis"] as const) {
    if (!limiters.includes(limiter)) continue;
    const load = os.loadavg().map((l) => l.toFixed(2));
    const r = await w7(url, {
      rows: W7_ROWS,
      tokensPerMinute: W7_TPM,
      limiter,
      delayMs: W7_DELAY_MS,
      ...(W7_MAX_TOKENS !== undefined ? { maxTokens: W7_MAX_TOKENS } : {}),
    });
    say(
      `W7 (${limiter}): ${r.rows} rows, ${r.calls} calls of ${r.tokensPerCall} tokens in ${r.seconds} s; ${r.tokensPerMinute} tokens/min over the run, ${r.steadyTokensPerMinute} without its first and last 10 s (${(r.steadyShareOfLimit * 100).toFixed(1)} % of ${r.tokensPerMinuteLimit}; within 5 %: ${r.withinFivePercent}); at most ${r.peakTokensIn60s} in any 60 s (${(r.peakShareOfLimit * 100).toFixed(1)} %); ${r.status429} 429s; ${r.rowsFailed} rows failed; charged ${r.chargedMilli / 1000} credits, expected ${r.expectedMilli / 1000}; load average before ${load.join(" ")}`,
    );
    const after = os.loadavg().map((l) => +l.toFixed(2));
    say(`W7 (${limiter}): load average after ${after.join(" ")}`);
    if (r.log)
      say(
        `W7 (${limiter}): the last sixth of the window held, on average, ${r.log.settled} of its limit in settled calls, ${r.log.unsettled} in ${r.log.unsettledCalls} calls granted and not yet settled (whole reservations), ${r.log.ahead} reserved ahead`,
      );
    runs[limiter] = { ...r, loadAverageBefore: load.map(Number), loadAverageAfter: after };
  }
  return runs;
}

main().catch((err: unknown) => {
  process.stderr.write(
    `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});

/**
 * Scenario 3, Redis stops mid-run: a `website_meta` enrichment over a loopback site,
 * paced at a low rate through one redis-server shared by two worker processes
 * (REDIS_URL, CELLFLOW_RATE_LIMIT_PER_SECOND). Redis is SIGKILLed mid-run and started
 * again on the same port (empty) after `downMs`: once briefly and once for longer
 * (100 s by default). Either way the waiting cells wait: a call's budget is its
 * attempt's deadline, not a count of refusals, so no cell ends `error`. A limiter that
 * cannot answer must never be taken as a yes: the site must not see more calls than the
 * limit in any one-second window. The enrichment is paid (1 credit an answer): the money
 * judge checks that every page the site served and a cell recorded was charged once, and
 * nothing else (`money.ts`).
 */

import { type Database, type Db, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { LocalBackend } from "@/backends/local";
import { sleep } from "@/domain/sleep";
import { startRun } from "@/engine/dispatcher";
import { createWorkspace } from "@/store/workspaces/create";
import { maxInAnyWindow } from "../../test/helpers/pacers";
import { sitesTable } from "../../test/helpers/store-tables";
import { transitionsOf } from "../audit";
import { checkTransitions, type InvariantReport, problemsOf } from "../invariants";
import { readMoney } from "../ledger-read";
import { judgeMoney, type MoneyReport, moneyLine, moneyProblems } from "../money";
import { RunMonitor } from "../monitor";
import { providerLog } from "../provider";
import { RestartableRedis } from "../redis";
import { type Arrival, type Sink, startSink } from "../sink";
import { WorkerPool } from "../workers";
import { cellsNow } from "../workload";

export interface RedisOptions {
  url: string;
  database: Database;
  cells: number;
  ratePerSec: number;
  concurrency: number;
  redriveEveryMs: number;
  timeoutMs: number;
  outages: { atFraction: number; downMs: number }[];
}

export interface OutageRecord {
  atMs: number;
  downMs: number;
  progress: number;
  /** Cells that ended `error` between the stop and 60 s after the restart (should be 0). */
  errors: number;
  /** From the stop until the first of them ended. */
  firstErrorAfterMs: number | null;
  /** From the restart until the limiter granted a call again. */
  resumedAfterMs: number | null;
}

export interface RedisResult {
  cells: number;
  seconds: number;
  limitPerSec: number;
  /** The most calls the site saw in any one-second window, and grants by Redis's clock. */
  arrivalsMaxInAnySecond: number;
  grantsMaxInAnySecond: number;
  /**
   * The one-second window where the site saw the most calls: each call's arrival, its
   * grant (Redis's clock) and the latency between them, in ms since the run started.
   */
  worstSecond: { arrivalMs: number; grantMs: number | null; latencyMs: number | null }[];
  arrivals: number;
  grants: number;
  /** Completed cells without a recorded grant: a call made without pacing. */
  completedWithoutGrant: number;
  outages: OutageRecord[];
  invariants: InvariantReport;
  money: MoneyReport;
  problems: string[];
  /**
   * Findings that break nothing: more calls at the site in one second than the limit when
   * their grants were paced (spread over a second or more) and only the way from grant to
   * site bunched them (a loaded machine's scheduling). No client-side limiter can space
   * arrivals tighter than the network's jitter; a provider contract needs that margin.
   */
  notes: string[];
  summary: string;
}

/** How far apart the grants of the calls in the site's busiest second lie, in ms (null: a call had none). */
function grantSpanMs(worst: RedisResult["worstSecond"]): number | null {
  const grants = worst.map((w) => w.grantMs);
  if (grants.some((g) => g === null)) return null;
  const xs = grants as number[];
  return xs.length === 0 ? 0 : Math.max(...xs) - Math.min(...xs);
}

interface CellPacing {
  status: string;
  error: string | null;
  at: string | null;
  finished: number | null;
  url: string;
}

/** The one-second window with the most calls, each matched to its cell's grant. */
function worstSecond(visits: Arrival[], cells: CellPacing[], started: number) {
  const grantOf = new Map(
    cells.map((c) => [new URL(c.url).search, c.at === null ? null : Number(c.at)]),
  );
  const sorted = [...visits].sort((a, b) => a.at - b.at);
  let best: Arrival[] = [];
  for (let lo = 0, hi = 0; hi < sorted.length; hi++) {
    while ((sorted[hi]?.at ?? 0) - (sorted[lo]?.at ?? 0) >= 1000) lo++;
    if (hi - lo + 1 > best.length) best = sorted.slice(lo, hi + 1);
  }
  return best.map((v) => {
    const g = grantOf.get(v.query) ?? null;
    return {
      arrivalMs: v.at - started,
      grantMs: g === null ? null : g - started,
      latencyMs: g === null ? null : v.at - g,
    };
  });
}

type LiveOutage = OutageRecord & { wallDown: number; wallUp: number };

export async function redisOutage(opts: RedisOptions): Promise<RedisResult> {
  const db = opts.database.db;
  const site = await startSink();
  site.on("/site", () => ({
    status: 200,
    body: "<html><head><title>ok</title></head></html>",
    contentType: "text/html",
  }));
  const redis = await RestartableRedis.start();
  const backend = new LocalBackend(opts.url);
  const pool = new WorkerPool({
    DATABASE_URL: opts.url,
    WORKER_CONCURRENCY: String(opts.concurrency),
    CELLFLOW_REDRIVE_EVERY_MS: String(opts.redriveEveryMs),
    REDIS_URL: redis.url,
    CELLFLOW_RATE_LIMIT_PER_SECOND: String(opts.ratePerSec),
  });
  let monitor: RunMonitor | undefined;
  try {
    const ws = await createWorkspace(db, "chaos-redis", "unlimited");
    const tableId = await sitesTable(db, ws.id, opts.cells, site.url, "sites");
    await pool.start(2);
    const started = Date.now();
    const run = await startRun(
      { db: db, backend },
      {
        tableId,
        groupIds: ["meta"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: opts.concurrency * 2,
      },
    );
    const live = new RunMonitor(db, run.dispatchId);
    monitor = live;
    live.start();
    const outages = await stopRedisMidRun(opts, live, redis, started);
    const end = await live.waitForEnd(opts.timeoutMs);
    const seconds = (Date.now() - started) / 1000;
    await live.stop();
    const ran = { db, site, pool, tableId, workspaceId: ws.id, started, outages, end, seconds };
    return await judgeRedisRun(opts, ran);
  } finally {
    await monitor?.stop();
    await pool.stop();
    await backend.close();
    await redis.down();
    await site.close();
  }
}

/** Each outage once the run has got that far: Redis down for its time, then up (empty). */
async function stopRedisMidRun(
  opts: RedisOptions,
  live: RunMonitor,
  redis: RestartableRedis,
  started: number,
): Promise<LiveOutage[]> {
  const outages: LiveOutage[] = [];
  for (const o of opts.outages) {
    await live.waitForTerminal(Math.floor(o.atFraction * opts.cells), opts.timeoutMs);
    if (live.last()?.status !== "active") break;
    const wallDown = Date.now();
    const progress = live.last()?.terminal ?? 0;
    await redis.down();
    await sleep(o.downMs);
    await redis.up();
    outages.push({
      atMs: wallDown - started,
      downMs: Date.now() - wallDown,
      progress,
      errors: 0,
      firstErrorAfterMs: null,
      resumedAfterMs: null,
      wallDown,
      wallUp: Date.now(),
    });
  }
  return outages;
}

/** What the run left, for the judgement. */
interface RedisRun {
  db: Db;
  site: Sink;
  pool: WorkerPool;
  tableId: string;
  workspaceId: string;
  started: number;
  outages: LiveOutage[];
  end: string;
  seconds: number;
}

/** The ended run: pacing, the outages' effects, the invariants, the money, the problems. */
async function judgeRedisRun(opts: RedisOptions, r: RedisRun): Promise<RedisResult> {
  const { db, site, tableId, outages } = r;
  const cells = await queryRows<CellPacing>(
    db,
    sql`select c.status::text as status, c.error,
               c.details->'providers'->0->'rateLimit'->>'at' as at,
               (extract(epoch from c.finished_at) * 1000)::float8 as finished, r.data->>'url' as url
          from cells c join rows r on r.id = c.row_id where c.table_id = ${tableId}`,
  );
  const grants = cells.flatMap((c) => (c.at === null ? [] : [Number(c.at)])).sort((a, b) => a - b);
  const visits = site.arrivals.filter((a) => a.path === "/site");
  const arrivals = visits.map((a) => a.at);
  measureOutages(outages, cells, grants);
  const transitions = await transitionsOf(db, tableId);
  const invariants = checkTransitions(transitions, await cellsNow(db, tableId), opts.cells);
  const money = judgeMoney({
    ...(await readMoney(db, {
      tableId,
      workspaceId: r.workspaceId,
      // website_meta costs 1 credit (src/enrichments/website-meta.ts).
      paid: [{ groupId: "meta", source: "website_meta", milli: 1_000, inputColumn: "url" }],
      transitions,
    })),
    answers: providerLog(site, "/site", (_q, search) => `${site.url}/site${search}`),
    // Every page has a title.
    expected: () => "found",
  });
  const result: RedisResult = {
    cells: opts.cells,
    seconds: r.seconds,
    limitPerSec: opts.ratePerSec,
    arrivalsMaxInAnySecond: maxInAnyWindow(arrivals, 1000),
    grantsMaxInAnySecond: maxInAnyWindow(grants, 1000),
    worstSecond: worstSecond(visits, cells, r.started),
    arrivals: arrivals.length,
    grants: grants.length,
    completedWithoutGrant: cells.filter((c) => c.status === "completed" && c.at === null).length,
    outages: outages.map(({ wallDown: _d, wallUp: _u, ...o }) => o),
    invariants,
    money,
    problems: [],
    notes: [],
    summary: "",
  };
  result.problems = redisProblems(opts, r, result);
  const told = outages.map(
    (o) =>
      `${(o.downMs / 1000).toFixed(0)} s: ${o.errors} cells ended error${o.firstErrorAfterMs === null ? "" : ` from ${(o.firstErrorAfterMs / 1000).toFixed(0)} s on`}, calls again ${o.resumedAfterMs ?? "-"} ms after`,
  );
  result.summary = `${opts.cells} cells at ${opts.ratePerSec}/s in ${r.seconds.toFixed(1)} s; ${outages.length} outages (${told.join("; ") || "-"}); ${invariants.statuses.error ?? 0} errors; at most ${result.arrivalsMaxInAnySecond} calls (${result.grantsMaxInAnySecond} grants) in any second; lost ${invariants.lost}, illegal ${invariants.illegalTransitions}; ${moneyLine(money)}`;
  return result;
}

/** Per outage: the cells that ended `error` around it, and when the limiter granted again. */
function measureOutages(outages: LiveOutage[], cells: CellPacing[], grants: number[]): void {
  for (const o of outages) {
    const errs = cells
      .filter(
        (c) =>
          c.status === "error" &&
          (c.finished ?? 0) >= o.wallDown &&
          (c.finished ?? 0) <= o.wallUp + 60_000,
      )
      .map((c) => c.finished ?? 0);
    o.errors = errs.length;
    o.firstErrorAfterMs = errs.length > 0 ? Math.round(Math.min(...errs) - o.wallDown) : null;
    const next = grants.find((g) => g >= o.wallUp);
    o.resumedAfterMs = next === undefined ? null : next - o.wallUp;
  }
}

/** What breaks the run; arrival jitter over paced grants goes to `result.notes` instead. */
function redisProblems(opts: RedisOptions, r: RedisRun, result: RedisResult): string[] {
  const { invariants, money } = result;
  const p = [...problemsOf(invariants), ...moneyProblems(money)];
  if (r.end !== "completed") p.push(`the run ended "${r.end}", not "completed"`);
  // Waiting out the limiter is the whole point: any error is a finding.
  for (const [m, n] of Object.entries(invariants.errors)) p.push(`${n} cells ended error: ${m}`);
  if (result.arrivalsMaxInAnySecond > opts.ratePerSec) {
    const span = grantSpanMs(result.worstSecond);
    const latencies = result.worstSecond.map((w) => w.latencyMs ?? 0);
    const seen = `the site saw ${result.arrivalsMaxInAnySecond} calls in one second (limit ${opts.ratePerSec})`;
    // Paced grants that arrive bunched are the way there, not the limiter; unpaced
    // grants (or a call without one) are a limiter that said yes when it should not.
    if (span !== null && span >= 1000)
      result.notes.push(
        `${seen}; their grants were spread over ${span} ms and reached the site ${Math.min(...latencies)}–${Math.max(...latencies)} ms after them: arrival jitter, not pacing`,
      );
    else
      p.push(
        `${seen}, granted within ${span ?? "?"} ms (at most ${result.grantsMaxInAnySecond} grants in any second by Redis's clock, see worstSecond)`,
      );
  }
  if (result.grantsMaxInAnySecond > opts.ratePerSec)
    p.push(`${result.grantsMaxInAnySecond} grants in one second (limit ${opts.ratePerSec})`);
  if (result.completedWithoutGrant > 0)
    p.push(`${result.completedWithoutGrant} cells called the site without a grant`);
  if (result.arrivals > result.grants)
    p.push(`${result.arrivals} calls reached the site but only ${result.grants} were granted`);
  for (const u of r.pool.unexpected)
    p.push(`worker slot ${u.slot} exited by itself (code ${u.code})`);
  return p;
}

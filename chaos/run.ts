/**
 * `npm run chaos`: faults injected into real runs, judged by invariants. Starts its own
 * embedded PostgreSQL in a temp directory (like `npm run bench`); each scenario and each
 * clean baseline gets a fresh database on it. Prints a line per scenario, then a JSON
 * report; exits 1 when an invariant broke. Knobs and figures: docs/reliability.md.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "../test/helpers/processes";
import type { ChainResult } from "./chain-run";
import { stopEverything } from "./cleanup";
import { type ChaosConfig, readConfig, say, seededRandom } from "./config";
import { destinationLine } from "./destination-judge";
import { moneyLine } from "./money";
import { RestartablePostgres } from "./postgres-server";
import { destinationKill } from "./scenarios/destination-kill";
import { postgresKill } from "./scenarios/postgres-kill";
import { type RedisResult, redisOutage } from "./scenarios/redis-outage";
import { stopMidCall } from "./scenarios/stop-mid-call";
import { type TriggerResult, triggerOutage } from "./scenarios/trigger-outage";
import { workerKill } from "./scenarios/worker-kill";
import { freshDatabase, GROUPS } from "./workload";

// Loopback sinks everywhere, including the carriers the trigger.dev scenario runs here.
process.env.CELLFLOW_ALLOW_PRIVATE_NETWORK = "1";
process.env.LOG_LEVEL ??= "silent";

interface ScenarioReport {
  scenario: string;
  ok: boolean;
  problems: string[];
  seconds: number;
  baselineSeconds: number | null;
  /** Faulted time over clean time, same workload. */
  slowdown: number | null;
  result: unknown;
}

const round = (n: number, d = 1) => +n.toFixed(d);
const verdict = (problems: string[]) =>
  problems.length === 0 ? " — OK" : ` — BROKEN: ${problems.join("; ")}`;
const noted = (notes: string[]) => (notes.length === 0 ? "" : ` (note: ${notes.join("; ")})`);
const versus = (seconds: number, base: number | null | undefined) =>
  base ? ` (clean ${base.toFixed(1)} s, ×${(seconds / base).toFixed(2)})` : "";

function chainLine(name: string, r: ChainResult, base: number | null): string {
  const heals = r.faults
    .map((f) => {
      const h = f.heal;
      if (h?.orphansRerunMs == null) return `${((h?.healMs ?? 0) / 1000).toFixed(1)} s`;
      // Found: the dead worker's cells handed back; healed: the last of them ran again.
      const found = ((h.orphansRequeuedMs ?? 0) / 1000).toFixed(1);
      return `${(h.orphansRerunMs / 1000).toFixed(1)} s (found in ${found} s)`;
    })
    .join(", ");
  const i = r.invariants;
  const d = i.duplicates;
  return `${name}: ${r.cells} cells in ${r.seconds.toFixed(1)} s${versus(r.seconds, base)}; ${r.faults.length} faults, healed in ${heals || "-"}; lost ${i.lost}, illegal ${i.illegalTransitions}, out of order ${i.outOfOrderClaims}, requeued ${i.requeues}, errors ${i.statuses.error ?? 0}${i.statuses.cancelled ? `, cancelled ${i.statuses.cancelled}` : ""}; duplicate calls ${d?.extraCalls ?? 0} (${d?.explainedByFault ?? 0} after a fault, ${d?.unexplained ?? 0} unexplained); ${moneyLine(r.money)}${verdict(r.problems)}`;
}

function report(
  scenario: string,
  problems: string[],
  seconds: number,
  baselineSeconds: number | null,
  result: unknown,
): ScenarioReport {
  return {
    scenario,
    ok: problems.length === 0,
    problems,
    seconds: round(seconds),
    baselineSeconds: baselineSeconds === null ? null : round(baselineSeconds),
    slowdown: baselineSeconds ? round(seconds / baselineSeconds, 2) : null,
    result,
  };
}

type FreshDb = Awaited<ReturnType<typeof freshDatabase>>;
type WithDb = <T>(fn: (d: FreshDb) => Promise<T>) => Promise<T>;

/** What the scenarios share: the knobs, a fresh database each, and the reports so far. */
interface ChaosSession {
  cfg: ChaosConfig;
  server: RestartablePostgres;
  withDb: WithDb;
  reports: ScenarioReport[];
  chain: ReturnType<typeof chainOptions>;
  /** The chain workload's clean run, once, for the slowdown of the chain scenarios. */
  chainBaseline: () => Promise<number | null>;
}

async function main(): Promise<void> {
  const cfg: ChaosConfig = readConfig();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-chaos-"));
  fs.chmodSync(dir, 0o777);
  const server = new RestartablePostgres(dir, await freePort());
  await server.start();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      say(`chaos: ${signal}, stopping the workers, Redis and Postgres`);
      void stopEverything()
        .then(() => server.current.stop())
        .finally(() => {
          fs.rmSync(dir, { recursive: true, force: true });
          process.exit(130);
        });
    });
  }
  const s = chaosSession(cfg, server);
  try {
    await runChainScenarios(s);
    if (cfg.only.has("redis-outage")) await runRedisOutage(s);
    if (cfg.only.has("trigger-outage")) await runTriggerOutage(s);
    if (cfg.only.has("destination-kill")) await runDestinationKill(s);
  } finally {
    await stopEverything();
    await server.current.stop();
    // CHAOS_KEEP=1: the cluster stays for a post-mortem (start it with db/embedded.ts).
    if (process.env.CHAOS_KEEP === "1") say(`kept the chaos cluster in ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
  say("");
  say(JSON.stringify({ config: { ...cfg, only: [...cfg.only] }, scenarios: s.reports }, null, 2));
  if (s.reports.some((r) => !r.ok)) process.exit(1);
}

function chainOptions(cfg: ChaosConfig) {
  return {
    rows: Math.max(1, Math.round(cfg.cells / GROUPS.length)),
    workers: 2,
    concurrency: cfg.concurrency,
    redriveEveryMs: cfg.redriveEveryMs,
    sinkMs: cfg.sinkMs,
    providerMs: cfg.providerMs,
    timeoutMs: cfg.timeoutMs,
  };
}

function chaosSession(cfg: ChaosConfig, server: RestartablePostgres): ChaosSession {
  let n = 0;
  const withDb: WithDb = async (fn) => {
    const d = await freshDatabase(server.current.url, `chaos_${process.pid}_${n++}`);
    try {
      return await fn(d);
    } finally {
      await d.database.close();
    }
  };
  const reports: ScenarioReport[] = [];
  const chain = chainOptions(cfg);
  let chainClean: number | null | undefined;
  const chainBaseline = async (): Promise<number | null> => {
    if (chainClean !== undefined) return chainClean;
    chainClean = null;
    if (!cfg.baseline) return null;
    const r = await withDb((d) => workerKill({ ...chain, ...d, kills: 0, random: Math.random }));
    say(chainLine("baseline (chain, no faults)", r, null));
    // A baseline that breaks an invariant breaks it without any fault: reported too.
    if (r.problems.length > 0)
      reports.push(report("baseline-chain", r.problems, r.seconds, null, r));
    chainClean = r.seconds;
    return chainClean;
  };
  return { cfg, server, withDb, reports, chain, chainBaseline };
}

/** worker-kill, postgres-kill and stop: the chain workload with its faults. */
async function runChainScenarios(s: ChaosSession): Promise<void> {
  const { cfg, chain, withDb, reports } = s;
  if (cfg.only.has("worker-kill")) {
    const base = await s.chainBaseline();
    const r = await withDb((d) =>
      workerKill({ ...chain, ...d, kills: cfg.kills, random: seededRandom(cfg.seed) }),
    );
    say(chainLine("worker-kill", r, base));
    reports.push(report("worker-kill", r.problems, r.seconds, base, r));
  }
  if (cfg.only.has("postgres-kill")) {
    const base = await s.chainBaseline();
    const r = await withDb((d) =>
      postgresKill({ ...chain, ...d, postgres: s.server, random: seededRandom(cfg.seed + 1) }),
    );
    say(chainLine("postgres-kill", r, base));
    reports.push(report("postgres-kill", r.problems, r.seconds, base, r));
  }
  if (cfg.only.has("stop")) {
    const base = await s.chainBaseline();
    const r = await withDb((d) =>
      stopMidCall({ ...chain, ...d, stops: cfg.stops, random: seededRandom(cfg.seed + 2) }),
    );
    say(chainLine("stop", r, base));
    reports.push(report("stop", r.problems, r.seconds, base, r));
  }
}

async function runRedisOutage({ cfg, withDb, reports }: ChaosSession): Promise<void> {
  const opts = {
    cells: cfg.redisCells,
    ratePerSec: cfg.redisRate,
    concurrency: Math.min(cfg.concurrency, 10),
    redriveEveryMs: cfg.redriveEveryMs,
    timeoutMs: cfg.timeoutMs,
  };
  let base: RedisResult | null = null;
  if (cfg.baseline) {
    base = await withDb((d) => redisOutage({ ...opts, ...d, outages: [] }));
    say(
      `baseline (redis, no outage): ${base.summary}${noted(base.notes)}${verdict(base.problems)}`,
    );
    if (base.problems.length > 0)
      reports.push(report("baseline-redis", base.problems, base.seconds, null, base));
  }
  const r = await withDb((d) =>
    redisOutage({
      ...opts,
      ...d,
      outages: [
        { atFraction: 0.2, downMs: cfg.redisShortMs },
        { atFraction: 0.5, downMs: cfg.redisLongMs },
      ],
    }),
  );
  say(
    `redis-outage: ${r.summary}${versus(r.seconds, base?.seconds)}${noted(r.notes)}${verdict(r.problems)}`,
  );
  reports.push(report("redis-outage", r.problems, r.seconds, base?.seconds ?? null, r));
}

async function runTriggerOutage({ cfg, withDb, reports }: ChaosSession): Promise<void> {
  const opts = {
    rows: Math.max(1, Math.round(cfg.triggerCells / GROUPS.length)),
    concurrency: cfg.concurrency,
    redriveEveryMs: cfg.redriveEveryMs,
    sinkMs: cfg.sinkMs,
    providerMs: cfg.providerMs,
    timeoutMs: cfg.timeoutMs,
  };
  let base: TriggerResult | null = null;
  if (cfg.baseline) {
    base = await withDb((d) => triggerOutage({ ...opts, ...d, outageMs: 0 }));
    say(`baseline (trigger.dev, no outage): ${base.summary}${verdict(base.problems)}`);
    if (base.problems.length > 0)
      reports.push(report("baseline-trigger", base.problems, base.seconds, null, base));
  }
  const r = await withDb((d) => triggerOutage({ ...opts, ...d, outageMs: cfg.triggerOutageMs }));
  say(`trigger-outage: ${r.summary}${versus(r.seconds, base?.seconds)}${verdict(r.problems)}`);
  reports.push(report("trigger-outage", r.problems, r.seconds, base?.seconds ?? null, r));
}

/** Destinations: a receiver that drops calls, workers SIGKILLed mid-delivery. */
async function runDestinationKill({ cfg, chain, withDb, reports }: ChaosSession): Promise<void> {
  const r = await withDb((d) =>
    destinationKill({
      ...chain,
      ...d,
      rows: cfg.destinationRows,
      kills: cfg.destinationKills,
      latencyMs: cfg.destinationLatencyMs,
      dropFraction: cfg.destinationDrop,
      drainTimeoutMs: 120_000,
      random: seededRandom(cfg.seed + 3),
    }),
  );
  const drained = r.drainedAfterMs === null ? "never" : `${(r.drainedAfterMs / 1000).toFixed(1)} s`;
  say(
    `destination-kill: ${r.cells} cells in ${r.seconds.toFixed(1)} s, ${r.faults.length} server kills (every worker) mid-delivery; ${destinationLine(r.destination)}; outbox empty ${drained} after the run${verdict(r.problems)}`,
  );
  reports.push(report("destination-kill", r.problems, r.seconds, null, r));
}

main().catch((err: unknown) => {
  process.stderr.write(
    `chaos failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});

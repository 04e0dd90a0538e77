/**
 * The chaos run's knobs (environment variables, all optional) and its seeded random
 * numbers: the same CHAOS_SEED picks the same fault moments and victims, so a failing
 * run can be repeated. See docs/reliability.md.
 */

const num = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, not ${JSON.stringify(raw)}`);
  return n;
};

export interface ChaosConfig {
  only: Set<string>;
  seed: number;
  /** Cells of the worker-kill, Postgres-kill and stop workloads (rows × 4 groups, `workload.ts`). */
  cells: number;
  /** WORKER_CONCURRENCY of each worker process; the dispatch window is twice this. */
  concurrency: number;
  /** CELLFLOW_REDRIVE_EVERY_MS of the workers, and of the simulated trigger.dev schedule. */
  redriveEveryMs: number;
  kills: number;
  /** Stops of running paid cells in the stop scenario. */
  stops: number;
  /** The loopback sink's answer latency: cells spend that long mid-call, where a kill hurts. */
  sinkMs: number;
  /** The billing provider's answer latency: paid calls in flight when a fault lands. */
  providerMs: number;
  redisCells: number;
  redisRate: number;
  /** The two Redis outages: a short one (cells wait) and one past the pacing budget. */
  redisShortMs: number;
  redisLongMs: number;
  triggerCells: number;
  /** How long the fake trigger.dev API answers 500, then as long 429. */
  triggerOutageMs: number;
  /** Rows of the destination scenario's chain table (each row sent once finished). */
  destinationRows: number;
  /** Worker SIGKILLs while deliveries are in flight. */
  destinationKills: number;
  /** The receiver's answer latency, and the share of its calls it drops. */
  destinationLatencyMs: number;
  destinationDrop: number;
  /** A run still going after this is reported stalled (its cells count as lost). */
  timeoutMs: number;
  baseline: boolean;
}

export function readConfig(): ChaosConfig {
  return {
    only: new Set(
      (
        process.env.CHAOS_ONLY ??
        "worker-kill,postgres-kill,stop,redis-outage,trigger-outage,destination-kill"
      )
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
    seed: num("CHAOS_SEED", 1),
    cells: num("CHAOS_CELLS", 20_000),
    concurrency: num("CHAOS_CONCURRENCY", 20),
    redriveEveryMs: num("CHAOS_REDRIVE_EVERY_MS", 15_000),
    kills: num("CHAOS_KILLS", 3),
    stops: num("CHAOS_STOPS", 5),
    sinkMs: num("CHAOS_SINK_MS", 10),
    providerMs: num("CHAOS_PROVIDER_MS", 50),
    redisCells: num("CHAOS_REDIS_CELLS", 300),
    redisRate: num("CHAOS_REDIS_RATE", 10),
    redisShortMs: num("CHAOS_REDIS_SHORT_MS", 5_000),
    redisLongMs: num("CHAOS_REDIS_LONG_MS", 100_000),
    triggerCells: num("CHAOS_TRIGGER_CELLS", 2_000),
    triggerOutageMs: num("CHAOS_TRIGGER_OUTAGE_MS", 10_000),
    destinationRows: num("CHAOS_DESTINATION_ROWS", 1_000),
    destinationKills: num("CHAOS_DESTINATION_KILLS", 2),
    destinationLatencyMs: num("CHAOS_DESTINATION_LATENCY_MS", 50),
    destinationDrop: num("CHAOS_DESTINATION_DROP", 0.2),
    timeoutMs: num("CHAOS_TIMEOUT_MS", 20 * 60_000),
    baseline: process.env.CHAOS_BASELINE !== "0",
  };
}

/** mulberry32: small, seedable, good enough to pick moments and victims. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export const say = (line: string) => process.stdout.write(`${line}\n`);

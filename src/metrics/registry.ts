/**
 * The Prometheus series of one process (prom-client, on a registry of its own): what the
 * engine counts where it happens — a cell's claim (stamp → running), an attempt's end (its
 * duration, by group kind and end), a provider call (by provider and outcome), a wait at
 * the rate limiter, the credits of a paid answer, the carriers running — plus the Node
 * process metrics. Everything here is in memory: an observation is a counter increment
 * or a histogram bucket, never a database write; the process's flush loop
 * (src/runtime/metrics-flush.ts) sends what grew every FLUSH_EVERY_MS, and
 * `GET /api/metrics` sums the processes of the deployment. The cell and queue gauges
 * are not here: the scrape reads them off the progress counters.
 */
import { randomUUID } from "node:crypto";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { FlushBook } from "./deltas";
import {
  FLUSH_EVERY_MS,
  type FlushHandle,
  FlushLoop,
  type FlushSource,
  type FlushTarget,
  type ProcessKind,
} from "./flush-loop";

/** What a provider call came to; `refused`: the provider said "not now" (a 429 or 503 with `Retry-After`). */
export type ProviderCallOutcome = "found" | "empty" | "error" | "refused" | "cached";

/** The names the code registers (the dashboard's queries are checked against them). */
export const METRIC = {
  cells: "cellflow_cells",
  queueDepth: "cellflow_queue_depth",
  carriersRunning: "cellflow_carriers_running",
  stampToRunning: "cellflow_stamp_to_running_seconds",
  cellDuration: "cellflow_cell_duration_seconds",
  providerCalls: "cellflow_provider_calls_total",
  rateLimitWait: "cellflow_rate_limit_wait_seconds",
  credits: "cellflow_credits_total",
  processes: "cellflow_processes",
} as const;

export class Metrics implements FlushSource {
  readonly registry = new Registry();
  /** This process's rows in `metric_series`: new at each start, never reused. */
  readonly processId = randomUUID();
  readonly stampToRunning: Histogram;
  readonly cellDuration: Histogram<"kind" | "end">;
  readonly providerCalls: Counter<"provider" | "outcome">;
  readonly rateLimitWait: Histogram<"provider">;
  readonly credits: Counter<"source">;
  readonly carriersRunning: Gauge;
  /** 1 per live process, by kind: the flush's heartbeat, and the count of processes summed. */
  readonly processes: Gauge<"kind">;
  /** What committed flushes sent (one book per set of metrics, whichever loop flushes). */
  private readonly book = new FlushBook();
  private loop: FlushLoop | undefined;

  /** `processMetrics`: with the Node process metrics (one set per process: they read the process). */
  constructor(opts: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.stampToRunning = new Histogram({
      name: METRIC.stampToRunning,
      help: "From a cell's stamp (queued) to its claim (running), seconds",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
      registers,
    });
    this.cellDuration = new Histogram({
      name: METRIC.cellDuration,
      help: "A cell attempt's run time by group kind and how it ended, seconds",
      labelNames: ["kind", "end"],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.providerCalls = new Counter({
      name: METRIC.providerCalls,
      help: "Enrichment provider calls by provider and outcome (cached: answered from the result cache)",
      labelNames: ["provider", "outcome"],
      registers,
    });
    this.rateLimitWait = new Histogram({
      name: METRIC.rateLimitWait,
      help: "Time a provider call waited for its turn at the rate limiter, seconds",
      labelNames: ["provider"],
      buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.credits = new Counter({
      name: METRIC.credits,
      help: "Credits of paid answers by source (an enrichment id, or llm:<model>)",
      labelNames: ["source"],
      registers,
    });
    this.carriersRunning = new Gauge({
      name: METRIC.carriersRunning,
      help: "Row carriers running now",
      registers,
    });
    this.processes = new Gauge({
      name: METRIC.processes,
      help: "Processes flushing their metrics, by kind",
      labelNames: ["kind"],
      registers,
    });
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /**
   * The process's flush loop, shared by whoever starts it (see flush-loop.ts); the first
   * start decides the process kind and the target.
   */
  startFlushing(kind: ProcessKind, target: FlushTarget, everyMs = FLUSH_EVERY_MS): FlushHandle {
    if (!this.loop || this.loop.idle)
      this.loop = new FlushLoop(this, this.book, kind, target, everyMs);
    return this.loop.start();
  }

  alive(kind: ProcessKind): void {
    this.processes.reset();
    this.processes.set({ kind }, 1);
  }

  /** A claimed cell waited this long since its stamp. */
  claimed(queuedSeconds: number): void {
    this.stampToRunning.observe(Math.max(0, queuedSeconds));
  }

  attemptEnded(kind: string, end: string, seconds: number): void {
    this.cellDuration.observe({ kind, end }, seconds);
  }

  providerCall(provider: string, outcome: ProviderCallOutcome): void {
    this.providerCalls.inc({ provider, outcome });
  }

  waited(provider: string, ms: number): void {
    this.rateLimitWait.observe({ provider }, ms / 1000);
  }

  charged(source: string, credits: number): void {
    if (credits > 0) this.credits.inc({ source }, credits);
  }
}

/** The metric source of a charge key: its enrichment id, or `llm:<model>`, without the block or step after `@`. */
export function creditSource(chargeSource: string): string {
  const at = chargeSource.indexOf("@");
  return at < 0 ? chargeSource : chargeSource.slice(0, at);
}

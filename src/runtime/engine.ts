/**
 * The composition root of the engine: the one place its dependencies are put together,
 * for both runtimes — the local worker (src/server/worker-runtime.ts) and trigger.dev's
 * tasks (src/trigger/deps.ts). Each brings what only it has (its task backend, its
 * logger, its database connections); the rest is decided here, from the environment,
 * once, into one handle (src/engine/handle.ts) its verbs take. Invariants: a process has
 * one rate limiter, chosen from the environment and
 * closed with the runtime (nothing reaches it through a global); what differs between the
 * runtimes (chaining rows in one job, refusing a per-process limiter) follows from the
 * runtime's name, not from flags each caller sets; the maintenance jobs run with the same
 * handle and settings as the carriers.
 */
import type { Database } from "@db/client";
import type { TaskBackend } from "@/backends/port";
import type { Env } from "@/config/env";
import type { Logger } from "@/config/log";
import { STOP_CHECK_MS } from "@/engine/cancellation";
import { type Engine, type EngineResources, engineResources } from "@/engine/handle";
import { limiterFromEnv } from "@/limits/rate/instance";
import { RateLines } from "@/limits/rate/line";
import type { RateLimiter } from "@/limits/rate/port";
import { processMetrics } from "@/metrics/instance";
import type { Metrics } from "@/metrics/registry";
import type { MaintenanceJob, Runtime } from "./maintenance";

export interface EngineParts {
  runtime: Runtime;
  env: Env;
  database: Database;
  backend: TaskBackend;
  log: Logger;
  /** Tests: a limiter of their own instead of the one the environment selects. */
  limiter?: RateLimiter;
  /** Tests: metrics of their own instead of the process's (src/metrics/instance.ts). */
  metrics?: Metrics;
  /**
   * Tests: the shared pieces of an engine already assembled over this database (one set
   * per database, as a process has), instead of new ones.
   */
  resources?: EngineResources;
}

export interface EngineRuntime {
  readonly runtime: Runtime;
  readonly env: Env;
  /** The handle carriers, the stamper and the re-drive run with (src/engine/handle.ts). */
  readonly engine: Engine;
  /** Runs one maintenance job with this runtime's deps and settings. */
  maintain(job: MaintenanceJob, signal: AbortSignal): Promise<Record<string, number>>;
  /** Closes what the root opened (the rate limiter); the caller closes what it brought. */
  close(): Promise<void>;
}

export function assembleEngine(parts: EngineParts): EngineRuntime {
  // Over the lock holders' pool: an attempt's admission and its rate-limit takes go
  // where the attempt's other writes go (the direct endpoint when the database is split).
  const limiter = parts.limiter ?? limiterFromEnv(parts.env, parts.database.sessionDb);
  if (limiter.kind === "memory" && parts.runtime === "local") {
    parts.log.warn(
      "RATE_LIMITER=memory: each process limits its own calls; several processes together exceed the limit",
    );
  }
  const metrics = parts.metrics ?? processMetrics();
  const engine: Engine = {
    ...(parts.resources ?? engineResources(parts.database)),
    database: parts.database,
    backend: parts.backend,
    log: parts.log,
    lines: new RateLines(limiter, metrics),
    metrics,
    enrichmentCacheTtlMs: parts.env.CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS * 3_600_000,
    // A trigger.dev run is one row (its tags, metadata and cancel mean that row), and each
    // run is its own process: only a limiter every run shares keeps a provider's rate.
    chain: parts.runtime === "local",
    requireSharedLimiter: parts.runtime === "trigger",
    // No cancel NOTIFY reaches a trigger.dev run, and a Stop cancels the run only when
    // nothing else rides on it: its attempts read their tombstone on a timer.
    stopCheckMs: parts.runtime === "trigger" ? STOP_CHECK_MS : undefined,
  };
  let closed: Promise<void> | undefined;
  return {
    runtime: parts.runtime,
    env: parts.env,
    engine,
    maintain: (job, signal) => job.run({ engine, env: parts.env, signal }),
    close() {
      closed ??= limiter.close();
      return closed;
    },
  };
}

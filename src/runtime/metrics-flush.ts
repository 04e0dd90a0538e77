/**
 * Starts the process's metrics flush (src/metrics/flush-loop.ts) over a database: every
 * process kind starts it where it starts its engine or its server — the local worker
 * (src/server/worker-runtime.ts), the server (src/server/run-server.ts; with the worker in
 * the same process they share one loop), a trigger.dev run's process (src/trigger/deps.ts).
 */
import type { Db } from "@db/client";
import type { Logger } from "@/config/log";
import { EXPIRE_AFTER_MS, type FlushHandle, type ProcessKind } from "@/metrics/flush-loop";
import { processMetrics } from "@/metrics/instance";
import type { Metrics } from "@/metrics/registry";
import { flushSeries, retireProcess } from "@/store/metrics/flush";

export function startMetricsFlush(opts: {
  db: Db;
  kind: ProcessKind;
  log: Logger;
  /** Default: the process's (src/metrics/instance.ts). */
  metrics?: Metrics;
  /** Default: FLUSH_EVERY_MS. */
  everyMs?: number;
  /** Default: EXPIRE_AFTER_MS. */
  expireAfterMs?: number;
}): FlushHandle {
  const { db, log } = opts;
  const expireAfterMs = opts.expireAfterMs ?? EXPIRE_AFTER_MS;
  return (opts.metrics ?? processMetrics()).startFlushing(
    opts.kind,
    {
      flush: async (process, series) => {
        await flushSeries(db, process, series, expireAfterMs);
      },
      retire: (processId) => retireProcess(db, processId),
      onError: (err) =>
        log.warn({ err }, "metrics flush failed; the next one sends what it missed"),
    },
    opts.everyMs,
  );
}

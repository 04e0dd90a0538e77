/**
 * A worker: graphile-worker running row carriers, plus the cancel listener. Its pool is
 * its own and sized for its carriers: each running carrier pins one connection for its
 * row lock, so the pool holds concurrency + a few for the listener and dispatch writes.
 */
import { createDatabase } from "../../db/client";
import { LocalBackend, startLocalWorker } from "../backends/local";
import type { Logger } from "../config/log";
import { listenForCancels } from "../engine/cancellation";
import { runCarrier } from "../engine/carrier";
import { runStamper } from "../engine/stamper";
import { pruneEvents } from "../store/events/prune";

export interface WorkerOptions {
  url: string;
  driver: "pg" | "neon";
  neonWsProxy?: string;
  concurrency: number;
  eventsRetentionHours?: number;
  log: Logger;
}

export interface RunningWorker {
  stop(): Promise<void>;
}

export async function startWorker(opts: WorkerOptions): Promise<RunningWorker> {
  const log = opts.log.child({ component: "worker" });
  const database = createDatabase({
    url: opts.url,
    driver: opts.driver,
    neonWsProxy: opts.neonWsProxy,
    poolMax: opts.concurrency + 5,
    applicationName: "cellflow-worker",
  });
  const backend = new LocalBackend(opts.url);
  const stopping = new AbortController();
  const listener = listenForCancels(database.pool, log);
  await listener.ready;
  const runner = await startLocalWorker({
    connectionString: opts.url,
    concurrency: opts.concurrency,
    log,
    crons: [
      {
        id: "prune-events",
        pattern: "*/10 * * * *",
        run: async () => {
          const n = await pruneEvents(database.db, opts.eventsRetentionHours ?? 72);
          if (n > 0) log.info({ pruned: n }, "old events pruned");
        },
      },
    ],
    stamper: async (payload, ctx) => {
      try {
        await runStamper(database.db, backend, payload, {
          ...ctx,
          signal: AbortSignal.any([ctx.signal, stopping.signal]),
        });
      } catch (err) {
        log.error({ err, ...payload }, "background stamping failed");
      }
    },
    carrier: async (payload, ctx) => {
      try {
        // Our stop() aborts at once; graphile-worker's own signal only after its grace period.
        const signal = AbortSignal.any([ctx.signal, stopping.signal]);
        await runCarrier({ database, backend, log }, payload, { ...ctx, signal });
      } catch (err) {
        // The engine owns retries: a failed carrier leaves its cells to the re-drive.
        log.error({ err, ...payload }, "carrier failed");
      }
    },
  });
  log.info({ concurrency: opts.concurrency }, "worker started");
  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        stopping.abort(new Error("worker stopping"));
        await runner.stop();
        await listener.stop();
        await backend.close();
        await database.close();
      })();
      return stopped;
    },
  };
}

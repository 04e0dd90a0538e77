/**
 * Scenario 2, Postgres SIGKILL: the chain workload with two worker processes, and the
 * embedded Postgres SIGKILLed mid-run: the postmaster and every backend at once (its
 * process group), as an OOM kill or a lost machine would, then started again on the same
 * data directory and port about a second later (crash recovery replays the WAL). Every
 * worker loses every connection at once; they must reconnect by themselves, the
 * re-drive must hand back what was running, and nothing committed may be lost.
 */

import { sleep } from "@/domain/sleep";
import { type ChainOptions, type ChainResult, runChain } from "../chain-run";

/** How the run controls its Postgres (`chaos/run.ts` owns the server). */
export interface PostgresControl {
  /** SIGKILLs the server's process group and waits until the postmaster is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same data directory and port; resolves once it accepts connections. */
  start(): Promise<void>;
}

export interface PostgresKillOptions extends Omit<ChainOptions, "faults"> {
  postgres: PostgresControl;
  random: () => number;
  downMs?: number;
}

export function postgresKill(opts: PostgresKillOptions): Promise<ChainResult> {
  return runChain({
    ...opts,
    faults: async (run) => {
      const p = 0.3 + opts.random() * 0.3;
      const reached = await run.monitor.waitForTerminal(Math.floor(p * run.cells), opts.timeoutMs);
      if (!reached || run.monitor.last()?.status !== "active") return;
      const f = run.fault("postgres SIGKILL", { atFraction: +p.toFixed(3) });
      await opts.postgres.kill();
      await sleep(opts.downMs ?? 1_000);
      await opts.postgres.start();
      f.wallEnd = Date.now();
      f.detail.backAfterMs = f.wallEnd - f.wallAt;
    },
  });
}

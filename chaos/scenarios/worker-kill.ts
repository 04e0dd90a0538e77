/**
 * Scenario 1, worker SIGKILLs: the chain workload run by two worker processes, one of
 * which is SIGKILLed (its whole process group, no chance to hand anything back) at
 * random moments, `kills` times, and restarted about a second later. What the dead
 * worker was running stays `running` with its row lock gone; the re-drive of the
 * surviving (and the restarted) worker must hand those cells back and get them run.
 */

import { sleep } from "@/domain/sleep";
import { type ChainOptions, type ChainResult, runChain } from "../chain-run";

export interface WorkerKillOptions extends Omit<ChainOptions, "faults"> {
  kills: number;
  random: () => number;
  /** How long the victim stays dead before its restart begins. */
  restartAfterMs?: number;
  /** The kills land between these fractions of the run's cells (default 0.1–0.8). */
  window?: [number, number];
}

export function workerKill(opts: WorkerKillOptions): Promise<ChainResult> {
  const [lo, hi] = opts.window ?? [0.1, 0.8];
  return runChain({
    ...opts,
    faults: async (run) => {
      const points = Array.from({ length: opts.kills }, () => lo + opts.random() * (hi - lo)).sort(
        (a, b) => a - b,
      );
      for (const p of points) {
        const reached = await run.monitor.waitForTerminal(
          Math.floor(p * run.cells),
          opts.timeoutMs,
        );
        if (!reached || run.monitor.last()?.status !== "active") return;
        const slot = Math.floor(opts.random() * run.pool.size);
        const f = run.fault("worker SIGKILL", { slot, atFraction: +p.toFixed(3) });
        f.detail.pid = await run.pool.kill(slot);
        await sleep(opts.restartAfterMs ?? 1_000);
        await run.pool.restart(slot);
        f.wallEnd = Date.now();
        f.detail.restartedAfterMs = f.wallEnd - f.wallAt;
      }
    },
  });
}

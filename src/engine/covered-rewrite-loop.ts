/**
 * The rewrite job of large Stops' cancel scopes (store/cells/rewrite-covered.ts): batches
 * until no scope is left, then the windows of the runs whose scopes it emptied slide (a
 * run a Stop covered only in part counted its covered rows as in flight until now). Run by
 * a loop in each local worker process, woken by a Stop made in the process and every
 * `pollMs` otherwise, and by the maintenance job (src/runtime/maintenance.ts) in both
 * runtimes. Guarantees: one pass at a time per loop; passes of several processes only take
 * turns (`skip locked`); a pass stopped between batches leaves the rest to the next, which
 * finds it in the table.
 */
import type { Db } from "@db/client";
import type { TaskBackend } from "@/backends/port";
import type { Logger } from "@/config/log";
import { pause } from "@/domain/sleep";
import { rewriteCoveredBatch } from "@/store/cells/rewrite-covered";
import { slideWindows } from "./dispatcher";
import { processWakers, wakeAll } from "./process-wakers";

const WAKERS = "covered-rewrite";
const wakers = () => processWakers(WAKERS);

/** Wakes the rewrite loops of this process; none here: the next poll or schedule runs it. */
export function wakeCoveredRewriters(): void {
  wakeAll(WAKERS);
}

export interface RewriteReport {
  rewritten: number;
  scopes: number;
}

/** Rewrites covered cells until no scope is left or `signal` aborts. */
export async function rewriteCovered(
  engine: { db: Db; backend: TaskBackend },
  opts: { signal?: AbortSignal; batch?: number } = {},
): Promise<RewriteReport> {
  const report: RewriteReport = { rewritten: 0, scopes: 0 };
  while (!opts.signal?.aborted) {
    const b = await rewriteCoveredBatch(engine.db, opts.batch);
    if (!b.scope) break;
    report.rewritten += b.rewritten;
    if (b.done) {
      report.scopes++;
      await slideWindows(engine, { tableId: b.scope.tableId, dispatchIds: [b.scope.dispatchId] });
    } else if (b.rewritten === 0) break; // only cells others hold: the next pass.
  }
  return report;
}

export interface CoveredRewriteLoop {
  stop(): Promise<void>;
}

export function startCoveredRewriteLoop(opts: {
  db: Db;
  backend: TaskBackend;
  log: Logger;
  pollMs?: number;
}): CoveredRewriteLoop {
  const stopping = new AbortController();
  const pollMs = opts.pollMs ?? 10_000;
  let wake: () => void = () => {};
  let woken = false;
  const onWake = () => {
    woken = true;
    wake();
  };
  wakers().add(onWake);
  const loop = async () => {
    while (!stopping.signal.aborted) {
      woken = false;
      try {
        const r = await rewriteCovered(opts, { signal: stopping.signal });
        if (r.scopes > 0) opts.log.info(r, "a Stop's covered cells rewritten");
      } catch (err) {
        if (!stopping.signal.aborted)
          opts.log.warn({ err }, "covered-cell rewrite failed; retrying");
      }
      if (woken) continue;
      const wakeUp = new AbortController();
      wake = () => wakeUp.abort();
      await pause(pollMs, AbortSignal.any([wakeUp.signal, stopping.signal]));
      wake = () => {};
    }
  };
  const running = loop();
  return {
    async stop() {
      wakers().delete(onWake);
      stopping.abort();
      wake();
      await running;
    },
  };
}

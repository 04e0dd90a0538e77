/**
 * The run-cancel drainer of a long-lived process (the one serving the API): drains the
 * outbox when a Stop in this process wakes it, and every `pollMs` otherwise (rows another
 * process left, retries coming due). Guarantees: one drain at a time per loop; `stop()`
 * returns once no call of it is in flight, and a row it had taken but not settled is
 * left to its lease, so another drainer finishes it.
 */
import type { Db } from "@db/client";
import type { TaskBackend } from "@/backends/port";
import type { Logger } from "@/config/log";
import { pause } from "@/domain/sleep";
import { processWakers, wakeAll } from "./process-wakers";
import {
  type DrainReport,
  type DrainSettings,
  drainRunCancels,
  TokenBucket,
} from "./run-cancel-drain";

const WAKERS = "run-cancel";
const wakers = () => processWakers(WAKERS);

/** Wakes the drainers of this process; none here: the next poll or schedule drains. */
export function wakeRunCancelDrainers(): void {
  wakeAll(WAKERS);
}

export interface RunCancelLoop {
  stop(): Promise<void>;
  /** Resolves after the next drain that started after this call ends (tests, benches). */
  drained(): Promise<DrainReport>;
}

export function startRunCancelLoop(opts: {
  db: Db;
  backend: TaskBackend;
  log: Logger;
  settings: DrainSettings;
  pollMs?: number;
}): RunCancelLoop {
  const stopping = new AbortController();
  const bucket = new TokenBucket(opts.settings.ratePerSecond, opts.settings.burst);
  const pollMs = opts.pollMs ?? 2_000;
  let wake: () => void = () => {};
  let woken = false;
  const waiters: ((r: DrainReport) => void)[] = [];
  const onWake = () => {
    woken = true;
    wake();
  };
  wakers().add(onWake);
  const loop = async () => {
    while (!stopping.signal.aborted) {
      woken = false;
      const taken = waiters.splice(0, waiters.length);
      let report: DrainReport = { cancelled: 0, spared: 0, gone: 0, retried: 0, dropped: 0 };
      try {
        report = await drainRunCancels({ ...opts, bucket, signal: stopping.signal });
      } catch (err) {
        if (!stopping.signal.aborted) opts.log.warn({ err }, "run-cancel drain failed; retrying");
      }
      for (const w of taken) w(report);
      if (woken || waiters.length > 0) continue;
      // Until the next poll, a wake or the stop.
      const wakeUp = new AbortController();
      wake = () => wakeUp.abort();
      await pause(pollMs, AbortSignal.any([wakeUp.signal, stopping.signal]));
      wake = () => {};
    }
  };
  const running = loop();
  return {
    drained: () =>
      new Promise<DrainReport>((resolve) => {
        waiters.push(resolve);
        wake();
      }),
    async stop() {
      wakers().delete(onWake);
      stopping.abort();
      wake();
      await running;
    },
  };
}

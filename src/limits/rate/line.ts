/**
 * A line per rate-limit key in this process: waiters are served first come, first
 * served, and only the one at the front asks the shared limiter (through `pace`).
 *
 * Why: when every waiter asks the limiter on its own, who gets the next free call is a
 * lottery among everyone whose backoff happens to end first, so a few unlucky waiters
 * wait many times longer than the rest (the p99), and waiters backed off for seconds
 * leave free calls unused (the rate falls short of the limit). In a line the wait is the
 * line's length over the rate, and one asker per key per process keeps the contention on
 * the shared limiter to one waiter per process.
 *
 * Invariants:
 * - First come, first served within a process; across processes the fronts of the
 *   lines compete with jittered waits (`pace`), so no two wake in lockstep.
 * - A waiter that is stopped leaves at once: its signal, or `isStopped` asked every
 *   `stopCheckMs` while it waits behind others (the front's own `pace` asks it there).
 * - When the front's budget runs out (the limiter keeps refusing, or cannot answer),
 *   everyone in the line hears the same `RateLimitExceeded`: they face the same limit,
 *   and a line must not take budget × length to drain while the limiter is down.
 */
import { CancelledError, isRateLimitExceeded } from "@/errors";
import { type PaceOptions, pace } from "./pace";
import type { RateLimit, RateLimiter } from "./port";

interface Waiter {
  opts: PaceOptions;
  settled: boolean;
  resolve(at: number): void;
  reject(reason: unknown): void;
}

interface Line {
  limiter: RateLimiter;
  key: string;
  limit: RateLimit;
  waiters: Waiter[];
}

/**
 * The lines of each limiter. A process builds one limiter (src/runtime/engine.ts), so
 * this is one set of lines per process; a test that plays many processes in one (the
 * simulated trigger.dev platform, a run per process) gives each its own limiter.
 */
const linesOf = new WeakMap<RateLimiter, Map<string, Line>>();

function linesFor(limiter: RateLimiter): Map<string, Line> {
  let lines = linesOf.get(limiter);
  if (!lines) {
    lines = new Map();
    linesOf.set(limiter, lines);
  }
  return lines;
}

/** How many waiters stand in `limiter`'s line for `key` (for tests and metrics). */
export function lineLength(limiter: RateLimiter, key: string, limit: RateLimit): number {
  return linesOf.get(limiter)?.get(lineId(key, limit))?.waiters.length ?? 0;
}

function lineId(key: string, limit: RateLimit): string {
  return `${limit.limit}/${limit.windowMs}:${key}`;
}

/**
 * Resolves once `key` may make its call, with when the limiter counted the grant; rejects
 * like `pace` (the signal's reason, CancelledError, RateLimitExceeded).
 */
export function paceInLine(
  limiter: RateLimiter,
  key: string,
  limit: RateLimit,
  opts: PaceOptions = {},
): Promise<number> {
  if (opts.signal?.aborted) return Promise.reject(opts.signal.reason);
  const id = lineId(key, limit);
  const lines = linesFor(limiter);
  let line = lines.get(id);
  if (!line) {
    line = { limiter, key, limit, waiters: [] };
    lines.set(id, line);
  }
  const current = line;
  return new Promise<number>((resolve, reject) => {
    let stopTimer: NodeJS.Timeout | undefined;
    const onAbort = () => leave(current, waiter, opts.signal?.reason);
    const cleanup = () => {
      clearInterval(stopTimer);
      opts.signal?.removeEventListener("abort", onAbort);
    };
    const waiter: Waiter = {
      opts,
      settled: false,
      resolve: (at) => {
        cleanup();
        resolve(at);
      },
      reject: (reason) => {
        cleanup();
        reject(reason);
      },
    };
    current.waiters.push(waiter);
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const isStopped = opts.isStopped;
    if (isStopped) {
      stopTimer = setInterval(() => {
        // The front's own pace asks isStopped; behind it, this timer does.
        if (current.waiters[0] === waiter) return;
        isStopped().then(
          (stopped) => {
            if (stopped) leave(current, waiter, new CancelledError());
          },
          () => {},
        );
      }, opts.stopCheckMs ?? 1_000);
      stopTimer.unref();
    }
    if (current.waiters.length === 1) void serve(lines, id, current);
  });
}

/** A waiter behind the front leaves now; the front leaves when its `pace` rejects. */
function leave(line: Line, waiter: Waiter, reason: unknown): void {
  const at = line.waiters.indexOf(waiter);
  if (at <= 0 || waiter.settled) return;
  line.waiters.splice(at, 1);
  settle(waiter, { ok: false, reason });
}

function settle(
  waiter: Waiter,
  result: { ok: true; at: number } | { ok: false; reason: unknown },
): void {
  if (waiter.settled) return;
  waiter.settled = true;
  if (result.ok) waiter.resolve(result.at);
  else waiter.reject(result.reason);
}

/** Serves the line front to back until it is empty; never rejects. */
async function serve(lines: Map<string, Line>, id: string, line: Line): Promise<void> {
  for (let front = line.waiters[0]; front; front = line.waiters[0]) {
    try {
      const at = await pace(line.limiter, line.key, line.limit, front.opts);
      line.waiters.shift();
      settle(front, { ok: true, at });
    } catch (err) {
      if (isRateLimitExceeded(err)) {
        for (const waiter of line.waiters.splice(0)) settle(waiter, { ok: false, reason: err });
      } else {
        line.waiters.shift();
        settle(front, { ok: false, reason: err });
      }
    }
  }
  if (lines.get(id) === line) lines.delete(id);
}

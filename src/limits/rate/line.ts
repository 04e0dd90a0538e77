/**
 * A line per rate-limit key in each process: waiters reserve their slots at the shared
 * limiter first come, first served, one take in flight per key per process (through
 * `reserve`); each then waits for its own slot out of the line, so the next can reserve
 * at once.
 *
 * Why: the limiter hands out slots in the order it is asked, so a process's line keeps
 * its calls in the order they came, and one take per key per process keeps the
 * contention at the shared limiter (the Postgres limiter's row lock) to one taker per
 * process. Across processes the limiter's order is the order of asking: no lottery.
 *
 * Invariants:
 * - First come, first served within a process.
 * - A waiter that is stopped leaves at once: its signal, or `isStopped` asked every
 *   `stopCheckMs` while it waits behind others (the front's own `reserve` asks it there).
 * - A waiter leaves only with a slot or when its own attempt ends: a limiter that keeps
 *   refusing or cannot answer is waited out by the front until its own deadline, and the
 *   next waiter then carries on (each waits up to its own attempt's deadline).
 */
import { CancelledError } from "@/errors";
import type { Metrics } from "@/metrics/registry";
import { assertCanGo, awaitSlot, CoolDowns, type PaceOptions, reserve } from "./pace";
import type { RateLimit, RateLimiter, Slot } from "./port";
import { RecentUse } from "./recent-use";

interface Waiter {
  opts: PaceOptions;
  settled: boolean;
  resolve(slot: Slot): void;
  reject(reason: unknown): void;
}

interface Line {
  limiter: RateLimiter;
  key: string;
  limit: RateLimit;
  waiters: Waiter[];
}

/**
 * The lines in front of one limiter, and this process's provider cool-downs: one per
 * engine handle (src/engine/handle.ts), built with the process's one limiter. A test that
 * plays many processes in one (the simulated trigger.dev platform, a run per process)
 * gives each its own limiter, and so its own lines.
 */
export class RateLines {
  private readonly lines = new Map<string, Line>();
  /** Provider-imposed pauses per key (pace.ts `CoolDowns`). */
  readonly coolDowns = new CoolDowns();
  /** What the calls on each weighted key really used of late (recent-use.ts). */
  readonly recentUse = new RecentUse();

  /** `metrics`: where the calls' waits are observed (the process's; tests may leave it out). */
  constructor(
    readonly limiter: RateLimiter,
    readonly metrics?: Metrics,
  ) {}

  /** How many waiters stand in the line for `key` (for tests and metrics). */
  length(key: string, limit: RateLimit): number {
    return this.lines.get(lineId(key, limit))?.waiters.length ?? 0;
  }

  /**
   * Resolves once `key` may make its call, with the time of its slot (the limiter's
   * clock); rejects like `pace` (the signal's reason, CancelledError).
   */
  async pace(key: string, limit: RateLimit, opts: PaceOptions = {}): Promise<number> {
    return (await this.paceSlot(key, limit, opts)).at;
  }

  /** As `pace`, resolving with the slot itself (what `settle` and `release` need). */
  async paceSlot(key: string, limit: RateLimit, opts: PaceOptions = {}): Promise<Slot> {
    assertCanGo(limit, opts);
    const withCoolDowns = { coolDowns: this.coolDowns, ...opts };
    const slot = await reserveInLine(this.lines, this.limiter, key, limit, withCoolDowns);
    await awaitSlot(this.limiter, key, limit, slot, withCoolDowns);
    return slot;
  }
}

function lineId(key: string, limit: RateLimit): string {
  return `${limit.limit}+${limit.weightLimit ?? ""}/${limit.windowMs}:${key}`;
}

function reserveInLine(
  lines: Map<string, Line>,
  limiter: RateLimiter,
  key: string,
  limit: RateLimit,
  opts: PaceOptions,
): Promise<Slot> {
  if (opts.signal?.aborted) return Promise.reject(opts.signal.reason);
  const id = lineId(key, limit);
  let line = lines.get(id);
  if (!line) {
    line = { limiter, key, limit, waiters: [] };
    lines.set(id, line);
  }
  const current = line;
  return new Promise<Slot>((resolve, reject) => {
    let stopTimer: NodeJS.Timeout | undefined;
    const onAbort = () => leave(current, waiter, opts.signal?.reason);
    const cleanup = () => {
      clearInterval(stopTimer);
      opts.signal?.removeEventListener("abort", onAbort);
    };
    const waiter: Waiter = {
      opts,
      settled: false,
      resolve: (slot) => {
        cleanup();
        resolve(slot);
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
        // The front's own reserve asks isStopped; behind it, this timer does.
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

/** A waiter behind the front leaves now; the front leaves when its `reserve` rejects. */
function leave(line: Line, waiter: Waiter, reason: unknown): void {
  const at = line.waiters.indexOf(waiter);
  if (at <= 0 || waiter.settled) return;
  line.waiters.splice(at, 1);
  settle(waiter, { ok: false, reason });
}

function settle(
  waiter: Waiter,
  result: { ok: true; slot: Slot } | { ok: false; reason: unknown },
): void {
  if (waiter.settled) return;
  waiter.settled = true;
  if (result.ok) waiter.resolve(result.slot);
  else waiter.reject(result.reason);
}

/** Serves the line front to back until it is empty; never rejects. */
async function serve(lines: Map<string, Line>, id: string, line: Line): Promise<void> {
  for (let front = line.waiters[0]; front; front = line.waiters[0]) {
    let result: { ok: true; slot: Slot } | { ok: false; reason: unknown };
    try {
      result = { ok: true, slot: await reserve(line.limiter, line.key, line.limit, front.opts) };
    } catch (reason) {
      result = { ok: false, reason };
    }
    line.waiters.shift();
    settle(front, result);
  }
  if (lines.get(id) === line) lines.delete(id);
}

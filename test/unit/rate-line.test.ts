/**
 * The per-process line in front of a rate limit: first come, first served; one take in
 * flight per key; each waiter leaves with its slot and waits for it on its own; a stopped
 * waiter leaves at once wherever it stands, giving back a slot it holds; no count of
 * refusals ends anyone's wait: only its own attempt's end does.
 */
import { describe, expect, it } from "vitest";
import { sleep } from "@/domain/sleep";
import { CancelledError, DeadlineError } from "@/errors";
import { RateLines } from "@/limits/rate/line";
import type { RateLimit, RateLimiter, Slot, Take } from "@/limits/rate/port";
import { waitFor } from "../helpers/processes";

/** One set of lines per limiter, as a process builds one with its one limiter. */
const lines = new Map<RateLimiter, RateLines>();
function linesOf(limiter: RateLimiter): RateLines {
  let l = lines.get(limiter);
  if (!l) {
    l = new RateLines(limiter);
    lines.set(limiter, l);
  }
  return l;
}

const limit: RateLimit = { limit: 1, windowMs: 1_000 };
let keys = 0;
const freshKey = () => `line-${++keys}`;
const slot = (at: number, waitMs = 0): Take => ({ ok: true, at, waitMs, ticket: String(at) });

/** A limiter that answers from a script of takes, counting callers in flight and releases. */
function scripted(answer: (n: number) => Take) {
  let asked = 0;
  let inFlight = 0;
  let peak = 0;
  const released: Slot[] = [];
  const limiter: RateLimiter = {
    kind: "memory",
    async take() {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await sleep(1);
      inFlight--;
      return answer(asked++);
    },
    async release(_key, _limit, s) {
      released.push(s);
    },
    async settle() {},
    async coolDown() {},
    async close() {},
  };
  return { limiter, asked: () => asked, peak: () => peak, released };
}

/** A limiter whose takes wait for the test to answer them. */
function manual() {
  const pending: ((take: Take) => void)[] = [];
  const limiter: RateLimiter = {
    kind: "memory",
    take: () => new Promise<Take>((r) => pending.push(r)),
    async release() {},
    async settle() {},
    async coolDown() {},
    async close() {},
  };
  return {
    limiter,
    answer: (take: Take) => pending.shift()?.(take),
    pending: () => pending.length,
  };
}

describe("a rate-limit line", () => {
  it("serves waiters in the order they came, with one of them asking the limiter at a time", async () => {
    // Every other take is refused: callers that asked on their own would race.
    const { limiter, peak } = scripted((n) =>
      n % 2 === 0 ? { ok: false, retryAfterMs: 2, reason: "limited" } : slot(n),
    );
    const key = freshKey();
    const served: number[] = [];
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        linesOf(limiter)
          .pace(key, limit, { baseMs: 2 })
          .then(() => served.push(i)),
      ),
    );
    expect(served).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(peak()).toBe(1);
    expect(linesOf(limiter).length(key, limit)).toBe(0);
  });

  it("hands each waiter its slot and lets the next reserve at once: waiters wait for their slots side by side, not one after another", async () => {
    // Slot n is n × 100 ms ahead, as a limiter reserving ahead answers.
    const { limiter, asked } = scripted((n) => slot(n, n * 100));
    const key = freshKey();
    const started = performance.now();
    const done = await Promise.all(
      Array.from({ length: 5 }, () =>
        linesOf(limiter)
          .pace(key, limit)
          .then((at) => ({ at, ms: performance.now() - started })),
      ),
    );
    expect(done.map((d) => d.at)).toEqual([0, 1, 2, 3, 4]);
    expect(asked()).toBe(5);
    // Each went at its own slot, never before it; all within the last slot plus slack.
    for (const [n, d] of done.entries()) expect(d.ms).toBeGreaterThanOrEqual(n * 100 - 2);
    expect(Math.max(...done.map((d) => d.ms))).toBeLessThan(400 + 300);
    expect(linesOf(limiter).length(key, limit)).toBe(0);
  });

  it("lets a waiter behind the front leave at once when its attempt is stopped", async () => {
    const { limiter, answer } = manual();
    const key = freshKey();
    const front = linesOf(limiter).pace(key, limit);
    const stop = new AbortController();
    const behind = linesOf(limiter).pace(key, limit, { signal: stop.signal });
    const last = linesOf(limiter).pace(key, limit);
    expect(linesOf(limiter).length(key, limit)).toBe(3);
    const reason = new CancelledError();
    stop.abort(reason);
    await expect(behind).rejects.toBe(reason);
    expect(linesOf(limiter).length(key, limit)).toBe(2);
    answer(slot(1));
    await expect(front).resolves.toBe(1);
    await waitFor(() => linesOf(limiter).length(key, limit) === 1, 1_000, 1);
    answer(slot(2));
    await expect(last).resolves.toBe(2);
  });

  it("asks a waiter behind the front whether its cell was stopped, and lets it go when it was", async () => {
    const { limiter } = manual();
    const key = freshKey();
    void linesOf(limiter)
      .pace(key, limit)
      .catch(() => {});
    let stopped = false;
    const behind = linesOf(limiter).pace(key, limit, {
      isStopped: async () => stopped,
      stopCheckMs: 5,
    });
    stopped = true;
    await expect(behind).rejects.toBeInstanceOf(CancelledError);
  });

  it("waits out a limiter that cannot answer for as long as each attempt lives: a front whose deadline passes leaves with the deadline's error, and the line carries on", async () => {
    // Down for the first 60 takes (more than any count of refusals used to allow), then back.
    const { limiter, asked } = scripted((n) =>
      n < 60 ? { ok: false, retryAfterMs: 1, reason: "unavailable" } : slot(n),
    );
    const key = freshKey();
    const deadline = new AbortController();
    const timedOut = linesOf(limiter)
      .pace(key, limit, {
        signal: deadline.signal,
        baseMs: 1,
        maxMs: 2,
      })
      .catch((e: unknown) => e);
    const rest = Array.from({ length: 4 }, () =>
      linesOf(limiter).pace(key, limit, { baseMs: 1, maxMs: 2 }),
    );
    await waitFor(() => asked() >= 20, 5_000, 1);
    const reason = new DeadlineError("Timed out after 5 min");
    deadline.abort(reason);
    expect(await timedOut).toBe(reason);
    const ats = await Promise.all(rest);
    expect(ats).toEqual([60, 61, 62, 63]);
    expect(linesOf(limiter).length(key, limit)).toBe(0);
  });

  it("gives back the slot of a waiter stopped while it waits for it", async () => {
    const { limiter, asked, released } = scripted(() => slot(7, 60_000));
    const stop = new AbortController();
    const key = freshKey();
    const waiting = linesOf(limiter).pace(key, limit, { signal: stop.signal });
    // Reserved, out of the line, waiting for its slot a minute ahead.
    await waitFor(() => asked() === 1 && linesOf(limiter).length(key, limit) === 0, 1_000, 1);
    const reason = new CancelledError();
    stop.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await waitFor(() => released.length === 1, 1_000, 1);
    expect(released[0]).toMatchObject({ at: 7, ticket: "7" });
  });

  it("refuses at once a waiter whose attempt is already stopped", async () => {
    const { limiter, asked } = scripted(() => slot(1));
    const stop = new AbortController();
    const reason = new CancelledError();
    stop.abort(reason);
    await expect(linesOf(limiter).pace(freshKey(), limit, { signal: stop.signal })).rejects.toBe(
      reason,
    );
    expect(asked()).toBe(0);
  });
});

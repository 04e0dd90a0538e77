/**
 * The per-process line in front of a rate limit: first come, first served; one asker per
 * key; a stopped waiter leaves at once wherever it stands; a front whose budget runs out
 * takes the whole line with it.
 */
import { describe, expect, it } from "vitest";
import { CancelledError, RateLimitExceeded } from "@/errors";
import { lineLength, paceInLine } from "@/limits/rate/line";
import type { RateLimit, RateLimiter, Take } from "@/limits/rate/port";
import { waitFor } from "../helpers/processes";

const limit: RateLimit = { limit: 1, windowMs: 1_000 };
let keys = 0;
const freshKey = () => `line-${++keys}`;

/** A limiter that answers from a script of takes, counting callers in flight. */
function scripted(answer: (n: number) => Take) {
  let asked = 0;
  let inFlight = 0;
  let peak = 0;
  const limiter: RateLimiter = {
    kind: "memory",
    async take() {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 1));
      inFlight--;
      return answer(asked++);
    },
    async close() {},
  };
  return { limiter, asked: () => asked, peak: () => peak };
}

describe("a rate-limit line", () => {
  it("serves waiters in the order they came, with one of them asking the limiter at a time", async () => {
    // Every other take is refused: callers that asked on their own would race.
    const { limiter, peak } = scripted((n) =>
      n % 2 === 0 ? { ok: false, retryAfterMs: 2, reason: "limited" } : { ok: true, at: n },
    );
    const key = freshKey();
    const served: number[] = [];
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        paceInLine(limiter, key, limit, { baseMs: 2 }).then(() => served.push(i)),
      ),
    );
    expect(served).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(peak()).toBe(1);
    expect(lineLength(limiter, key, limit)).toBe(0);
  });

  it("lets a waiter behind the front leave at once when its attempt is stopped", async () => {
    let release: (take: Take) => void = () => {};
    const limiter: RateLimiter = {
      kind: "memory",
      take: () => new Promise<Take>((r) => (release = r)),
      async close() {},
    };
    const key = freshKey();
    const front = paceInLine(limiter, key, limit);
    const stop = new AbortController();
    const behind = paceInLine(limiter, key, limit, { signal: stop.signal });
    const last = paceInLine(limiter, key, limit);
    expect(lineLength(limiter, key, limit)).toBe(3);
    const reason = new CancelledError();
    stop.abort(reason);
    await expect(behind).rejects.toBe(reason);
    expect(lineLength(limiter, key, limit)).toBe(2);
    release({ ok: true, at: 1 });
    await expect(front).resolves.toBe(1);
    await waitFor(() => lineLength(limiter, key, limit) === 1, 1_000, 1);
    release({ ok: true, at: 2 });
    await expect(last).resolves.toBe(2);
  });

  it("asks a waiter behind the front whether its cell was stopped, and lets it go when it was", async () => {
    const limiter: RateLimiter = {
      kind: "memory",
      take: () => new Promise<Take>(() => {}),
      async close() {},
    };
    const key = freshKey();
    void paceInLine(limiter, key, limit).catch(() => {});
    let stopped = false;
    const behind = paceInLine(limiter, key, limit, {
      isStopped: async () => stopped,
      stopCheckMs: 5,
    });
    stopped = true;
    await expect(behind).rejects.toBeInstanceOf(CancelledError);
  });

  it("fails the whole line with the front when its budget runs out", async () => {
    const { limiter, asked } = scripted(() => ({
      ok: false,
      retryAfterMs: 1,
      reason: "unavailable",
    }));
    const key = freshKey();
    const all = Array.from({ length: 5 }, () =>
      paceInLine(limiter, key, limit, { attempts: 3, baseMs: 1, maxMs: 2 }).catch(
        (e: unknown) => e,
      ),
    );
    const errors = await Promise.all(all);
    for (const e of errors) expect(e).toBeInstanceOf(RateLimitExceeded);
    // The front's budget only: the line did not take budget × length to fail.
    expect(asked()).toBe(3);
    expect(lineLength(limiter, key, limit)).toBe(0);
  });

  it("refuses at once a waiter whose attempt is already stopped", async () => {
    const { limiter, asked } = scripted(() => ({ ok: true, at: 1 }));
    const stop = new AbortController();
    const reason = new CancelledError();
    stop.abort(reason);
    await expect(paceInLine(limiter, freshKey(), limit, { signal: stop.signal })).rejects.toBe(
      reason,
    );
    expect(asked()).toBe(0);
  });
});

/**
 * The run context's `beforeCall(providerId, signal)`: paces every provider call of a
 * workspace through the shared limiter, keyed `<workspaceId>:<providerId>`, at the
 * workspace plan's rate, standing in this process's line for that key (`line.ts`).
 * Resolves with the grant (when the limiter counted it, how long the call waited);
 * rejects with the signal's reason on a Stop, CancelledError when `isStopped` finds the
 * tombstone, or RateLimitExceeded ("Rate limit exceeded — retry later") when the
 * budget runs out.
 */
import type { Plan } from "@/domain/statuses";
import type { BeforeCall } from "@/enrichments/types";
import { planLimits } from "../plans";
import { paceInLine } from "./line";
import { coolDown, type PaceOptions } from "./pace";
import type { RateLimiter } from "./port";

/** Refusals the front of a line waits through before the line ends "Rate limit exceeded". */
export const CELL_PACE_ATTEMPTS = 40;

export function rateLimitKey(workspaceId: string, providerId: string): string {
  return `${workspaceId}:${providerId}`;
}

/**
 * Backoff base for a rate: a quarter of the even spacing (1 s / rate), kept between 2
 * and 100 ms. The limiter says when the next call frees up, and only the front of each
 * process's line asks, so a small jitter keeps processes out of lockstep; a jitter of a
 * whole spacing left freed calls unused (W5: 47.6/s instead of 49.5/s at 50/s).
 */
export function paceBaseMs(perSecond: number): number {
  return Math.min(100, Math.max(2, Math.round(250 / perSecond)));
}

export function limiterHook(
  workspaceId: string,
  plan: Plan,
  opts: Omit<PaceOptions, "signal"> & { limiter: RateLimiter },
): BeforeCall {
  const { limiter, ...paceOpts } = opts;
  const perSecond = planLimits(plan).rateLimitPerSecond;
  const limit = { limit: perSecond, windowMs: 1_000 };
  return async (providerId, signal) => {
    const started = Date.now();
    const at = await paceInLine(limiter, rateLimitKey(workspaceId, providerId), limit, {
      attempts: CELL_PACE_ATTEMPTS,
      baseMs: paceBaseMs(perSecond),
      // The limiter knows when a call frees up: backing off much longer than a window
      // only leaves calls unused.
      maxMs: 1_000,
      stopCheckMs: 2_000,
      ...paceOpts,
      signal,
    });
    return { at, waitedMs: Math.max(0, Date.now() - started) };
  };
}

/** After a provider's 429: later calls of this workspace to it wait `retryAfterMs` here. */
export function providerRetryAfter(
  workspaceId: string,
  providerId: string,
  retryAfterMs: number,
): void {
  coolDown(rateLimitKey(workspaceId, providerId), retryAfterMs);
}

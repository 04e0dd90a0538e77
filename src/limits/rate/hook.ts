/**
 * The run context's `beforeCall(providerId, signal)`: paces every provider call of a
 * workspace through the shared limiter, keyed `<workspaceId>:<providerId>`, at the
 * workspace plan's rate. Resolves when the call may go; rejects with the signal's reason
 * on a Stop, CancelledError when `isStopped` finds the tombstone, or RateLimitExceeded
 * (message "Rate limit exceeded — retry later") when the budget runs out.
 */
import type { Plan } from "../../domain/statuses";
import { planLimits } from "../plans";
import { rateLimiter } from "./instance";
import { coolDown, type PaceOptions, pace } from "./pace";
import type { RateLimiter } from "./port";

/** Refusals a cell waits through before it ends as "Rate limit exceeded — retry later". */
export const CELL_PACE_ATTEMPTS = 40;

export type BeforeCall = (providerId: string, signal: AbortSignal) => Promise<void>;

export function rateLimitKey(workspaceId: string, providerId: string): string {
  return `${workspaceId}:${providerId}`;
}

export function limiterHook(
  workspaceId: string,
  plan: Plan,
  opts: Omit<PaceOptions, "signal"> & { limiter?: RateLimiter } = {},
): BeforeCall {
  const { limiter, ...paceOpts } = opts;
  const limit = { limit: planLimits(plan).rateLimitPerSecond, windowMs: 1_000 };
  return async (providerId, signal) => {
    await pace(limiter ?? rateLimiter(), rateLimitKey(workspaceId, providerId), limit, {
      // A whole window of carriers may queue behind one provider at the plan's rate
      // (free: 20 at 5/s); the budget must outlast that queue, not error inside it.
      attempts: CELL_PACE_ATTEMPTS,
      ...paceOpts,
      signal,
    });
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

/**
 * The run context's `beforeCall(providerId, signal)`: paces every provider call of a
 * workspace through the shared limiter, keyed `<workspaceId>:<providerId>`, at the
 * workspace plan's rate, standing in this process's line for that key (`line.ts`).
 * Resolves with the grant (the call's slot, how long the call waited). Its budget is the
 * attempt's time: it waits its turn until `signal` aborts (the attempt's deadline, with
 * the deadline's own error, or a Stop) or `isStopped` finds the tombstone
 * (CancelledError); with `deadlineAt`, no slot past it is reserved.
 */
import type { Plan } from "@/domain/statuses";
import type { BeforeCall } from "@/enrichments/types";
import { planLimits } from "../plans";
import type { RateLines } from "./line";
import type { PaceOptions } from "./pace";

export function rateLimitKey(workspaceId: string, providerId: string): string {
  return `${workspaceId}:${providerId}`;
}

/**
 * The jitter on a refusal's retry-after: a quarter of the even spacing (1 s / rate), kept
 * between 2 and 100 ms. Refusals only come when no slot is in reach (the limiter reserves
 * one otherwise), so this only keeps processes asking again out of lockstep.
 */
export function paceBaseMs(perSecond: number): number {
  return Math.min(100, Math.max(2, Math.round(250 / perSecond)));
}

export function limiterHook(
  workspaceId: string,
  plan: Plan,
  opts: Omit<PaceOptions, "signal" | "coolDowns"> & { lines: RateLines },
): BeforeCall {
  const { lines, ...paceOpts } = opts;
  const perSecond = planLimits(plan).rateLimitPerSecond;
  const limit = { limit: perSecond, windowMs: 1_000 };
  return async (providerId, signal) => {
    const started = Date.now();
    const at = await lines.pace(rateLimitKey(workspaceId, providerId), limit, {
      baseMs: paceBaseMs(perSecond),
      // A limiter that cannot answer is asked again at least every second: the calls
      // waiting for it go as soon as it is back.
      maxMs: 1_000,
      stopCheckMs: 2_000,
      ...paceOpts,
      signal,
    });
    const waitedMs = Math.max(0, Date.now() - started);
    lines.metrics?.waited(providerId, waitedMs);
    return { at, waitedMs };
  };
}

/** After a provider's 429: later calls of this workspace to it wait `retryAfterMs` here. */
export function providerRetryAfter(
  lines: RateLines,
  workspaceId: string,
  providerId: string,
  retryAfterMs: number,
): void {
  lines.coolDowns.coolDown(rateLimitKey(workspaceId, providerId), retryAfterMs);
}

/**
 * The gate in front of an attempt's paid provider calls: enrichments, run as a group or
 * as a workflow block. Invariants: each charge key (a source under a charge id) is
 * admitted — its credits reserved under every cap (store/usage/reserve.ts), or the run
 * halted when the month's credits are used up or the run's own cap would be passed —
 * before its first provider call, so a skipped enrichment reserves nothing; the
 * reservation is charged only by the fenced write that records the answer (the caller
 * passes the key with it: `Finish.charges`, a checkpoint's charges) and released
 * otherwise (`release`, or the trigger when the attempt ends); a call over its row's
 * budget is not made and ends the whole attempt (`RowBudgetExceeded` through `onHalt`: the
 * cell ends `over_budget` whichever group, block or step called); an attempt that lost its
 * cell makes no call; every call then waits its turn at the workspace's shared rate limit for
 * as long as the attempt lives (its deadline is the budget, not a count of refusals),
 * standing down on a Stop (its signal, or the tombstone when the notice does not reach
 * this process) and at the deadline (its signal again: the cell shows the deadline's
 * message); a provider's refusal with a `Retry-After` holds this process's later
 * calls of the workspace to that provider that long. In front of it all, the workspace's
 * result cache (when on): a fresh answer for the same inputs is reused, with no admission
 * and no call, unless the charge of the call that made it was released (nobody paid). A halt aborts the whole attempt through `onHalt` before it is thrown,
 * so no block can turn it into a workflow failure: the cell goes back to un-run.
 * Each provider call's outcome is counted in the process's metrics, and a key's credits
 * once, at its first answer found (the write that records it charges them).
 * Where runs are separate processes (trigger.dev), a per-process limiter is refused
 * before anything is charged or called: the attempt is aborted with SharedLimiterRequired
 * and the cell ends `error` with its message.
 */
import type { PaidCalls, ResultCache } from "@/enrichments/types";
import { LostAuthority, RowBudgetExceeded, SharedLimiterRequired, UsageLimitHalt } from "@/errors";
import { limiterHook, providerRetryAfter } from "@/limits/rate/hook";
import { sharedLimiterRefusal } from "@/limits/rate/port";
import { creditSource } from "@/metrics/registry";
import { attemptSuperseded } from "@/store/engine-reads";
import { releaseCharge } from "@/store/usage/release";
import { type AdmissionRequest, admitCall } from "./admission";
import type { Engine } from "./handle";
import { paidFor, resultCache } from "./result-cache";

/** The attempt whose calls are paid for: an admission request without what it charges. */
export type PaidAttempt = Omit<AdmissionRequest, "charge" | "credits">;

/**
 * What of the engine handle the gate uses: where lock holders write, the rate lines, and
 * the settings of paid calls (whether a shared limiter is required, the cache's age).
 */
export type PaidEngine = Pick<Engine, "lines" | "requireSharedLimiter" | "enrichmentCacheTtlMs"> & {
  locks: Pick<Engine["locks"], "db">;
};

/**
 * What every gate of paid calls in an attempt starts from: the workspace's result cache
 * (answers younger than its TTL are reused; TTL 0: none) and, where runs are separate
 * processes, why the limiter cannot pace them (undefined when it can).
 */
export function paidCallSettings(
  engine: PaidEngine,
  workspaceId: string,
  onCacheError?: (err: unknown) => void,
): { cache: ResultCache | undefined; refusal: string | undefined } {
  const ttlMs = engine.enrichmentCacheTtlMs;
  return {
    cache:
      ttlMs > 0
        ? resultCache(engine.locks.db, workspaceId, {
            ttlMs,
            ...(onCacheError ? { onError: onCacheError } : {}),
          })
        : undefined,
    refusal: engine.requireSharedLimiter
      ? sharedLimiterRefusal(engine.lines.limiter.kind)
      : undefined,
  };
}

export function paidCalls(
  engine: PaidEngine,
  a: PaidAttempt,
  onHalt: (
    halt: UsageLimitHalt | RowBudgetExceeded | SharedLimiterRequired | LostAuthority,
  ) => void,
  opts: {
    /** The attempt's deadline (epoch ms): the pacing reserves no slot past it. */
    deadlineAt?: number;
    onCacheError?: (err: unknown) => void;
  } = {},
): PaidCalls {
  const { db } = engine.locks;
  const { cache, refusal } = paidCallSettings(engine, a.workspaceId, opts.onCacheError);
  const pace = limiterHook(a.workspaceId, a.plan, {
    lines: engine.lines,
    deadlineAt: opts.deadlineAt,
    isStopped: () =>
      attemptSuperseded(db, {
        rowId: a.rowId,
        groupId: a.groupId,
        executionId: a.executionId,
        attempt: a.attempt,
      }),
  });
  const admitted = new Set<string>();
  /** The keys whose paid answer was counted in the metrics' credits (once per key, as charged). */
  const counted = new Set<string>();
  const { metrics } = engine.lines;
  const cell = {
    rowId: a.rowId,
    groupId: a.groupId,
    executionId: a.executionId,
    attempt: a.attempt,
  };
  return ({ source, chargeId, credits }) => {
    const charge = { chargeId, source };
    const key = JSON.stringify([chargeId, source]);
    return {
      charge,
      beforeCall: async (providerId, signal) => {
        // Before the reservation: a refused call is neither reserved nor made.
        // Aborting the attempt first keeps a workflow's error branch from carrying on as if
        // one block had failed: the whole cell ends with the message.
        if (refusal) {
          const refused = new SharedLimiterRequired(refusal);
          onHalt(refused);
          throw refused;
        }
        if (!admitted.has(key)) {
          const admission = await admitCall(db, { ...a, charge, credits });
          if (admission !== "admitted") {
            const end =
              admission === "halted"
                ? new UsageLimitHalt()
                : admission === "over_budget"
                  ? new RowBudgetExceeded(source, credits)
                  : new LostAuthority("stale");
            onHalt(end);
            throw end;
          }
          admitted.add(key);
        }
        return pace(providerId, signal);
      },
      release: async () => {
        if (!admitted.delete(key) || credits <= 0) return;
        // Best effort: what this misses, the trigger releases when the attempt ends.
        await releaseCharge(db, { cell, charge }).catch(() => undefined);
      },
      providerBusy: (providerId, retryAfterMs) =>
        providerRetryAfter(engine.lines, a.workspaceId, providerId, retryAfterMs),
      onProviderCall: (providerId, outcome) => {
        metrics?.providerCall(providerId, outcome);
        if (outcome !== "found" || counted.has(key)) return;
        counted.add(key);
        metrics?.charged(creditSource(source), credits);
      },
      // Only a reserved charge is ever charged: a free call's answer is kept free.
      ...(cache ? { cache: paidFor(cache, credits > 0 ? charge : null) } : {}),
    };
  };
}

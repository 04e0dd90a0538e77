/**
 * The enrichment result cache over Postgres (table enrichment_cache), one per attempt's
 * workspace. Invariants: a lookup answers from a fresh entry, or hands out the one live
 * claim on its key (a lease), or waits — stop-aware — until the claim's holder fills the
 * entry, gives it up or dies; so concurrent misses of one key, in any number of processes,
 * make one provider call. A lease is kept live while its holder works (a call may wait
 * long for its rate-limit turn), so only a dead holder's claim goes stale; only `ok` and
 * `not_found` answers are kept. A paid answer is kept with its charge key (`paidFor`) and
 * not served once that charge was released, so an answer whose cell was stopped before
 * its write is not handed out free to later runs. A cache that cannot be read or written never fails
 * the work: the lookup is a miss.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "@db/client";
import type { ChargeKey } from "@/domain/charges";
import { sleep } from "@/domain/sleep";
import { type CacheLookup, isPaidAnswer, type ResultCache } from "@/enrichments/types";
import { fillCached, releaseCached, touchCached } from "@/store/enrichment-cache/fill";
import { type CacheKey, takeCached } from "@/store/enrichment-cache/take";

/** A claim not touched for this long belongs to a process that died. */
export const CLAIM_STALE_MS = 30_000;
/** How often a holder touches its claim. */
const TOUCH_EVERY_MS = 5_000;
/** A waiter asks again after this, doubling up to `MAX_POLL_MS`. */
const FIRST_POLL_MS = 20;
const MAX_POLL_MS = 500;

export interface ResultCacheOptions {
  ttlMs: number;
  staleMs?: number;
  touchEveryMs?: number;
  /**
   * A write of the cache failed. The answer still reaches the cell: the cache only saves
   * calls, and an entry left claimed goes stale and is claimed again.
   */
  onError?: (err: unknown) => void;
}

export function resultCache(db: Db, workspaceId: string, opts: ResultCacheOptions): ResultCache {
  const staleMs = opts.staleMs ?? CLAIM_STALE_MS;
  return {
    async lookup(enrichmentId, inputKey, signal) {
      const key: CacheKey = { workspaceId, enrichmentId, inputKey };
      for (let pollMs = FIRST_POLL_MS; ; pollMs = Math.min(pollMs * 2, MAX_POLL_MS)) {
        signal.throwIfAborted();
        const claimId = randomUUID();
        const took = await takeCached(db, { ...key, claimId, ttlMs: opts.ttlMs, staleMs }).catch(
          (err: unknown) => {
            // Unreadable: a miss without a claim (the cache only saves calls).
            opts.onError?.(err);
            return { kind: "unavailable" } as const;
          },
        );
        switch (took.kind) {
          case "hit":
            return took;
          case "claimed":
            return lease(db, { ...key, claimId }, opts);
          case "unavailable":
            return { kind: "lease", keep: async () => undefined, drop: async () => undefined };
          case "busy":
            await sleep(pollMs, signal);
        }
      }
    },
  };
}

function lease(
  db: Db,
  claim: CacheKey & { claimId: string },
  opts: ResultCacheOptions,
): CacheLookup {
  const failed = (err: unknown) => opts.onError?.(err);
  // A failed touch only risks a second call by a waiter that took the claim over; a claim
  // taken over is not touched again.
  const touch = setInterval(
    () =>
      void touchCached(db, claim).then((held) => {
        if (held === "lost") clearInterval(touch);
      }, failed),
    opts.touchEveryMs ?? TOUCH_EVERY_MS,
  );
  touch.unref();
  return {
    kind: "lease",
    async keep(result, paidBy) {
      clearInterval(touch);
      const write =
        result.outcome === "ok" || result.outcome === "not_found"
          ? fillCached(db, {
              ...claim,
              outcome: result.outcome,
              outputs: result.outputs,
              ...(paidBy ? { paidBy } : {}),
            })
          : releaseCached(db, claim);
      await write.catch(failed);
    },
    async drop() {
      clearInterval(touch);
      await releaseCached(db, claim).catch(failed);
    },
  };
}

/**
 * The cache as one charge's enrichment calls use it: an answer they keep that is a paid
 * answer (`isPaidAnswer`) is kept as paid by `charge`, the key whose reservation the write
 * recording it charges. `charge` null: the calls reserve nothing (free), answers are free.
 */
export function paidFor(cache: ResultCache, charge: ChargeKey | null): ResultCache {
  return {
    async lookup(enrichmentId, inputKey, signal) {
      const found = await cache.lookup(enrichmentId, inputKey, signal);
      if (found.kind === "hit") return found;
      return {
        kind: "lease",
        keep: (result) => found.keep(result, charge && isPaidAnswer(result) ? [charge] : []),
        drop: () => found.drop(),
      };
    },
  };
}

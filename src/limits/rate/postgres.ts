/**
 * The rate limiter on the database every Cellflow process already shares: the default
 * when neither Upstash nor REDIS_URL is configured. The same sliding log as the Redis
 * adapters (slots.ts), kept in `rate_limit_logs`: a refusal is one read, a grant one
 * statement under the key's row lock (store/rate-limits/take.ts).
 *
 * A weighted limit (an llm model's tokens) keeps each entry's weight beside its slot
 * (cellflow_rate_take_weighted): `settle` rewrites the entry's weight under the key's row
 * lock (a reservation's unused tokens are free again at once; an excess is counted at the
 * call's slot), `release` removes it, and `coolDown` writes the key's row in
 * rate_limit_cool_downs, which every weighted take reads.
 *
 * Invariant: never fail open. A take that errors (database down, lock timeout) or does
 * not answer within TAKE_TIMEOUT_MS says "unavailable"; a slot reserved by a take that
 * answers after the timeout is not used, which only errs on the side of fewer calls.
 */
import type { Db } from "@db/client";
import { coolDownKey } from "@/store/rate-limits/cool-down";
import { releaseSlot, releaseWeightedSlot } from "@/store/rate-limits/release";
import { settleEntry } from "@/store/rate-limits/settle";
import { type TakeOutcome, takeFromLog } from "@/store/rate-limits/take";
import { takeWeighted } from "@/store/rate-limits/take-weighted";
import type { RateLimit, RateLimiter, Slot, Take, TakeOptions } from "./port";
import { TAKE_TIMEOUT_MS, UNAVAILABLE_RETRY_MS } from "./sliding-log";
import {
  aheadWeight,
  guardMs,
  horizonMs,
  partLimit,
  partSpanMs,
  partWeight,
  spacingMs,
} from "./slots";

const UNAVAILABLE: Take = { ok: false, retryAfterMs: UNAVAILABLE_RETRY_MS, reason: "unavailable" };

const logKey = (key: string, { limit, windowMs, weightLimit }: RateLimit) =>
  weightLimit === undefined
    ? `${limit}/${windowMs}:${key}`
    : `${limit}+${weightLimit}/${windowMs}:${key}`;

export class PostgresLimiter implements RateLimiter {
  readonly kind = "postgres" as const;

  constructor(
    private readonly db: Db,
    private readonly timeoutMs = TAKE_TIMEOUT_MS,
  ) {}

  async take(key: string, rate: RateLimit, opts: TakeOptions = {}): Promise<Take> {
    const { limit, windowMs, weightLimit } = rate;
    const weight = opts.weight ?? 1;
    if (weightLimit !== undefined && weight > weightLimit) {
      throw new RangeError(`weight ${weight} > limit ${weightLimit}`);
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.timeoutMs);
    });
    const log = {
      key: logKey(key, rate),
      limit,
      windowMs,
      spacingMs: spacingMs(limit, windowMs),
      guardMs: guardMs(windowMs),
      reachMs: Math.max(
        0,
        Math.min(opts.maxWaitMs ?? Number.POSITIVE_INFINITY, horizonMs(windowMs)),
      ),
    };
    const taken: Promise<TakeOutcome> =
      weightLimit === undefined
        ? takeFromLog(this.db, log)
        : takeWeighted(this.db, {
            ...log,
            coolKey: key,
            weightLimit,
            weight,
            partSpanMs: partSpanMs(windowMs + guardMs(windowMs)),
            partLimit: partLimit(weightLimit, partWeight(weight, opts.partCap)),
            partCap: opts.partCap,
            aheadLimit: aheadWeight(weightLimit),
          });
    try {
      const outcome = await Promise.race([taken, timedOut]);
      if (outcome === "timeout") {
        // Still running: its answer (or error) goes nowhere.
        taken.catch(() => {});
        return UNAVAILABLE;
      }
      if (!outcome.granted) return { ok: false, retryAfterMs: outcome.waitMs, reason: "limited" };
      const slot = { at: outcome.atMs, waitMs: outcome.waitMs, ticket: String(outcome.atMs) };
      return weightLimit === undefined ? { ok: true, ...slot } : { ok: true, ...slot, weight };
    } catch {
      return UNAVAILABLE;
    } finally {
      clearTimeout(timer);
    }
  }

  async release(key: string, rate: RateLimit, slot: Slot): Promise<void> {
    const released =
      rate.weightLimit === undefined
        ? releaseSlot(this.db, logKey(key, rate), slot.at)
        : releaseWeightedSlot(this.db, logKey(key, rate), slot.at, slot.weight ?? 1);
    await released.catch(() => {});
  }

  async settle(key: string, rate: RateLimit, slot: Slot, weight: number): Promise<void> {
    if (rate.weightLimit === undefined) return;
    await settleEntry(this.db, logKey(key, rate), slot.at, slot.weight ?? 1, weight).catch(
      () => {},
    );
  }

  async coolDown(key: string, ms: number): Promise<void> {
    await coolDownKey(this.db, key, ms).catch(() => {});
  }

  /** The database belongs to whoever passed it in. */
  async close(): Promise<void> {}
}

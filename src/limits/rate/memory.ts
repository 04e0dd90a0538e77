/**
 * The in-process rate limiter (RATE_LIMITER=memory only): the sliding log the shared
 * limiters keep (slots.ts), per key, weighted for a limit with a `weightLimit`. It limits
 * one process only: two worker processes each allow the full limit, and its cool-downs
 * hold this process's takes only.
 */
import type { RateLimit, RateLimiter, Slot, Take, TakeOptions } from "./port";
import {
  aheadWeight,
  guardMs,
  horizonMs,
  nextSlot,
  nextWeightedSlot,
  spacingMs,
  type WeightedEntry,
} from "./slots";

interface Entry extends WeightedEntry {
  ticket: string;
}

export class MemoryLimiter implements RateLimiter {
  readonly kind = "memory" as const;
  /** Entries per `<limit>/<windowMs>:<key>` (or `<limit>+<weightLimit>/…`), oldest first. */
  private readonly logs = new Map<string, Entry[]>();
  /** Cool-downs per key: epoch ms before which no slot is given. */
  private readonly cool = new Map<string, number>();
  private tickets = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async take(key: string, rate: RateLimit, opts: TakeOptions = {}): Promise<Take> {
    const { limit, windowMs, weightLimit } = rate;
    const id = logId(key, rate);
    const t = this.now();
    const span = windowMs + guardMs(windowMs);
    const log = (this.logs.get(id) ?? []).filter((e) => e.at > t - span);
    this.logs.set(id, log);
    const reach = Math.max(
      0,
      Math.min(opts.maxWaitMs ?? Number.POSITIVE_INFINITY, horizonMs(windowMs)),
    );
    const weight = opts.weight ?? 1;
    let slot: number;
    let aheadWaitMs = 0;
    if (weightLimit === undefined) {
      slot = Math.max(
        nextSlot(
          log.map((e) => e.at),
          t,
          limit,
          span,
          spacingMs(limit, windowMs),
        ),
        this.cool.get(key) ?? 0,
      );
    } else {
      if (weight > weightLimit) throw new RangeError(`weight ${weight} > limit ${weightLimit}`);
      ({ slot, aheadWaitMs } = nextWeightedSlot(log, t, weight, {
        limit,
        weightLimit,
        spanMs: span,
        spacing: spacingMs(limit, windowMs),
        aheadLimit: aheadWeight(weightLimit),
        coolUntil: this.cool.get(key) ?? 0,
        ...(opts.partCap === undefined ? {} : { partCap: opts.partCap }),
      }));
    }
    if (slot - t > reach || aheadWaitMs > 0) {
      return {
        ok: false,
        retryAfterMs: Math.max(1, slot - t - reach, aheadWaitMs),
        reason: "limited",
      };
    }
    const ticket = String(++this.tickets);
    log.push({ at: slot, weight, ticket });
    return {
      ok: true,
      at: slot,
      waitMs: slot - t,
      ticket,
      ...(weightLimit === undefined ? {} : { weight }),
    };
  }

  async release(key: string, rate: RateLimit, slot: Slot): Promise<void> {
    const log = this.logs.get(logId(key, rate));
    const i = log?.findIndex((e) => e.ticket === slot.ticket) ?? -1;
    if (i >= 0) log?.splice(i, 1);
  }

  async settle(key: string, rate: RateLimit, slot: Slot, weight: number): Promise<void> {
    const entry = this.logs.get(logId(key, rate))?.find((e) => e.ticket === slot.ticket);
    if (entry) entry.weight = weight;
  }

  async coolDown(key: string, ms: number): Promise<void> {
    const until = this.now() + ms;
    if ((this.cool.get(key) ?? 0) < until) this.cool.set(key, until);
  }

  async close(): Promise<void> {
    this.logs.clear();
    this.cool.clear();
  }
}

function logId(key: string, { limit, windowMs, weightLimit }: RateLimit): string {
  return weightLimit === undefined
    ? `${limit}/${windowMs}:${key}`
    : `${limit}+${weightLimit}/${windowMs}:${key}`;
}

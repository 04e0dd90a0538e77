/**
 * The in-process rate limiter (RATE_LIMITER=memory only): the sliding log the shared
 * limiters keep (slots.ts), per key. It limits one process only: two worker processes
 * each allow the full limit.
 */
import type { RateLimit, RateLimiter, Slot, Take, TakeOptions } from "./port";
import { guardMs, horizonMs, nextSlot, spacingMs } from "./slots";

export class MemoryLimiter implements RateLimiter {
  readonly kind = "memory" as const;
  /** Entries per `<limit>/<windowMs>:<key>`, oldest first. */
  private readonly logs = new Map<string, number[]>();

  constructor(private readonly now: () => number = Date.now) {}

  async take(key: string, { limit, windowMs }: RateLimit, opts: TakeOptions = {}): Promise<Take> {
    const id = `${limit}/${windowMs}:${key}`;
    const t = this.now();
    const span = windowMs + guardMs(windowMs);
    const log = (this.logs.get(id) ?? []).filter((at) => at > t - span);
    this.logs.set(id, log);
    const slot = nextSlot(log, t, limit, span, spacingMs(limit, windowMs));
    const reach = Math.max(
      0,
      Math.min(opts.maxWaitMs ?? Number.POSITIVE_INFINITY, horizonMs(windowMs)),
    );
    if (slot - t > reach) return { ok: false, retryAfterMs: slot - t - reach, reason: "limited" };
    log.push(slot);
    return { ok: true, at: slot, waitMs: slot - t, ticket: String(slot) };
  }

  async release(key: string, { limit, windowMs }: RateLimit, slot: Slot): Promise<void> {
    const log = this.logs.get(`${limit}/${windowMs}:${key}`);
    const i = log?.indexOf(slot.at) ?? -1;
    if (i >= 0) log?.splice(i, 1);
  }

  async close(): Promise<void> {
    this.logs.clear();
  }
}

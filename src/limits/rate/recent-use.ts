/**
 * What the calls on each weighted key of this process really used of late (their settled
 * weights): the cap a take counts every entry at in a part of its window (slots.ts
 * `partWeight`), so calls in flight count there at about what they will use, not at their
 * whole reservation.
 * Why the most of the last `RECENT`, not a mean: an entry counted below what its call
 * uses lets a part hold more than its share until it settles; the most of the last few is
 * rarely passed by the next call, and the window's own rule counts every reservation in
 * full whatever the cap (the limit is never passed through it). No cap before a key's
 * first settled call: its entries count in full, as before.
 */
const RECENT = 32;
/** Keys remembered per process (workspace × model): the oldest is forgotten past it. */
const MAX_KEYS = 1_000;

export class RecentUse {
  private readonly byKey = new Map<string, number[]>();

  /** A call on `key` settled having used `weight` (a whole number ≥ 0). */
  add(key: string, weight: number): void {
    const used = Math.max(0, Math.ceil(weight));
    let recent = this.byKey.get(key);
    if (!recent) {
      if (this.byKey.size >= MAX_KEYS) {
        const oldest = this.byKey.keys().next();
        if (!oldest.done) this.byKey.delete(oldest.value);
      }
      recent = [];
      this.byKey.set(key, recent);
    }
    recent.push(used);
    if (recent.length > RECENT) recent.shift();
  }

  /** The most any of the key's last settled calls used, or undefined before the first. */
  cap(key: string): number | undefined {
    const recent = this.byKey.get(key);
    return recent && recent.length > 0 ? Math.max(...recent) : undefined;
  }
}

/**
 * The per-row carrier lock: a session advisory lock held on one of the process's few
 * lock sessions (lock-sessions.ts). Invariants: taken with pg_try_advisory_lock (never
 * waits: contention means the holder drains the row); the holder's writes go through
 * the pool, fenced by the cell's execution id and attempt like every write, so a holder
 * whose lock session died cannot overwrite the attempt that replaced it; a lost session
 * aborts the cascades of every row it held; a crashed process's locks die with its
 * sessions.
 */
import type { Db } from "@db/client";
import type { Release } from "@/store/dispatches/advance";
import type { EngineResources } from "./handle";
import { rowLockKey } from "./lock-sessions";

export { rowLockKey };

export interface RowSession {
  /** Where the holder writes: the pool (the lock session only locks). */
  db: Db;
  /** Aborts when the session is lost (heartbeat failed or connection error). */
  lost: AbortSignal;
  /**
   * Unlocks, tells whether the row has queued cells (ones stamped while we were
   * finishing, whose own carrier may have bailed on our lock; true when the lock session
   * was lost), and slides the windows of these dispatches. `advances` is null when the
   * slide failed (the caller slides them on its own).
   */
  release(dispatchIds?: readonly string[]): Promise<{
    moreQueued: boolean;
    advances: Release["advances"] | null;
  }>;
}

/** Takes the row lock; null when another carrier holds it. */
export async function acquireRowLock(
  engine: Pick<EngineResources, "locks" | "advances">,
  tableId: string,
  rowId: string,
): Promise<RowSession | null> {
  const hub = engine.locks;
  const key = rowLockKey(tableId, rowId);
  const session = await hub.acquire(key);
  if (!session) return null;
  let released = false;
  return {
    db: hub.db,
    lost: session.lost,
    async release(dispatchIds = []) {
      if (released) return { moreQueued: false, advances: null };
      released = true;
      // The unlock and the window slides are independent (the window counts rows by
      // their cells, not their locks): both in flight at once, on their own connections.
      const [unlock, advances] = await Promise.all([
        hub.release(key, session, rowId),
        dispatchIds.length > 0
          ? engine.advances.release(dispatchIds).catch(() => null)
          : Promise.resolve([] as Release["advances"]),
      ]);
      // An unlock that found no lock: the session was reset under us; hand the row on.
      return { moreQueued: unlock.more || !unlock.unlocked, advances };
    },
  };
}

/**
 * Coalesced wake-ups for a table's event streams, for the carrier's per-cell statements.
 * A NOTIFY in a transaction takes one database-wide lock from its pre-commit until the
 * commit is flushed, so every notifying commit in the cluster waits for the one before:
 * with one NOTIFY per cell write, the engine's throughput was the disk's flush rate.
 * Here the write commits without one, and at most one NOTIFY per table per interval
 * follows it, on the pool, after the commit (a reader woken by it finds the events).
 * A wake lost to a crash costs a stream its safety poll's latency, never an event.
 */
import type { Database } from "@db/client";
import { log } from "@/config/log";
import { notify } from "@/store/notify/publish";
import { EVENTS_CHANNEL } from "./hub";

export const WAKE_COALESCE_MS = 20;

/** The wake-ups of one database's tables: one per engine handle (src/engine/handle.ts). */
export class TableWaker {
  private readonly pending = new Set<string>();

  constructor(private readonly database: Database) {}

  /** Schedules one NOTIFY for the table's streams within WAKE_COALESCE_MS. */
  wake(tableId: string): void {
    if (this.pending.has(tableId)) return;
    this.pending.add(tableId);
    setTimeout(() => {
      this.pending.delete(tableId);
      // Shut down meanwhile: nobody is left to wake through this database.
      if (this.database.isClosed()) return;
      notify(this.database.db, EVENTS_CHANNEL, tableId).catch((err: unknown) => {
        log().warn({ err, tableId }, "could not wake the table's event streams");
      });
    }, WAKE_COALESCE_MS).unref();
  }
}

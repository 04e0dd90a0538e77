/**
 * One LISTEN per process for `cellflow_events` (payload: table id), fanned out to the
 * table's subscribers (its feed, see feed.ts). They then read the events table from their
 * cursor, so a notification is only a wake-up: a missed one costs latency, never an event.
 * A lost LISTEN connection wakes everyone and is re-established while anyone subscribes.
 */
import type { SessionClient, SessionPool } from "@db/client";
import type { Logger } from "@/config/log";
import { listen } from "@/store/notify/listen";

export const EVENTS_CHANNEL = "cellflow_events";

type Wake = () => void;

export class EventHub {
  private subscribers = new Map<string, Set<Wake>>();
  private client: SessionClient | undefined;
  private dropClient: (() => void) | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly pool: SessionPool,
    private readonly log: Logger,
  ) {}

  /** Registers a wake-up for the table's events; resolves once LISTEN is active. */
  async subscribe(tableId: string, wake: Wake): Promise<() => void> {
    let set = this.subscribers.get(tableId);
    if (!set) {
      set = new Set();
      this.subscribers.set(tableId, set);
    }
    set.add(wake);
    await this.ensureListening();
    return () => {
      const s = this.subscribers.get(tableId);
      s?.delete(wake);
      if (s && s.size === 0) this.subscribers.delete(tableId);
    };
  }

  private ensureListening(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= (async () => {
      const client = await this.pool.connect();
      // Destroyed exactly once, whoever gets there first (an error, a failed LISTEN,
      // close()): a session that never goes back leaks a pool slot, and a pool with a
      // leaked session never ends (shutdown waits on it).
      let dropped = false;
      const drop = () => {
        if (dropped) return;
        dropped = true;
        if (this.client === client) this.client = undefined;
        client.release(true);
      };
      client.on("notification", (msg) => {
        if (msg.channel !== EVENTS_CHANNEL || !msg.payload) return;
        for (const wake of this.subscribers.get(msg.payload) ?? []) wake();
      });
      client.on("error", (err) => {
        if (dropped) return;
        this.log.warn(
          { err },
          "event listener lost its connection; streams fall back to their poll until it is back",
        );
        drop();
        // Wake everyone: they re-read from their cursors, so nothing is missed.
        for (const set of this.subscribers.values()) for (const wake of set) wake();
        this.relisten();
      });
      try {
        await listen(client, EVENTS_CHANNEL);
      } catch (err) {
        drop();
        throw err;
      }
      if (this.closed) return drop();
      this.client = client;
      this.dropClient = drop;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /**
   * Listens again while anyone is subscribed: a table's feed subscribes once for all its
   * streams, so waiting for the next subscribe could leave them on the safety poll.
   */
  private relisten(): void {
    setTimeout(() => {
      if (this.closed || this.client || this.subscribers.size === 0) return;
      this.ensureListening().then(
        // Whatever was notified while nobody listened is found by re-reading.
        () => {
          for (const set of this.subscribers.values()) for (const wake of set) wake();
        },
        () => this.relisten(),
      );
    }, 1_000).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.dropClient?.();
    this.dropClient = undefined;
  }

  get isClosed(): boolean {
    return this.closed;
  }
}

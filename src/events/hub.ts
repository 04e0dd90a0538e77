/**
 * One LISTEN session per process (per database), for `cellflow_events` (payload: table
 * id), fanned out to the table's subscribers (its feed, see feed.ts), and for any other
 * channel a component listens to (the engine's cancel channel, engine/cancellation.ts).
 * Table subscribers then read the events table from their cursor, so a notification is
 * only a wake-up: a missed one costs latency, never an event. A channel listener's
 * notifications are only promptness too (a Stop's tombstone decides). A lost LISTEN
 * connection wakes every table subscriber and is re-established, with every channel
 * listened again, while anyone subscribes.
 */
import type { SessionClient, SessionPool } from "@db/client";
import type { Logger } from "@/config/log";
import { listen, unlisten } from "@/store/notify/listen";

export const EVENTS_CHANNEL = "cellflow_events";

/** How long the hub waits before trying again when a reconnect failed. */
const RECONNECT_MS = 500;

type Wake = () => void;
type OnPayload = (payload: string) => void;

export class EventHub {
  private subscribers = new Map<string, Set<Wake>>();
  /** Listeners of the other channels, by channel. */
  private channels = new Map<string, Set<OnPayload>>();
  /** Channels LISTENed on the current session. */
  private listening = new Set<string>();
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
    await this.ensureListening(EVENTS_CHANNEL);
    return () => {
      const s = this.subscribers.get(tableId);
      s?.delete(wake);
      if (s && s.size === 0) this.subscribers.delete(tableId);
    };
  }

  /**
   * Calls `onPayload` with each notification's payload on `channel`; resolves once LISTEN
   * is active (rejects, unregistered, when it could not be). The returned function stops it.
   */
  async listen(channel: string, onPayload: OnPayload): Promise<() => void> {
    let set = this.channels.get(channel);
    if (!set) {
      set = new Set();
      this.channels.set(channel, set);
    }
    set.add(onPayload);
    const off = () => {
      const s = this.channels.get(channel);
      s?.delete(onPayload);
      if (!s || s.size > 0) return;
      this.channels.delete(channel);
      // Nobody listens any more: the session stops receiving the channel (best effort).
      const client = this.client;
      if (client && this.listening.delete(channel)) unlisten(client, channel).catch(() => {});
    };
    try {
      await this.ensureListening(channel);
    } catch (err) {
      off();
      throw err;
    }
    return off;
  }

  /** The channels wanted now: the events' while a table has subscribers, and the others'. */
  private wanted(): string[] {
    const wanted = [...this.channels.keys()];
    if (this.subscribers.size > 0) wanted.push(EVENTS_CHANNEL);
    return wanted;
  }

  private async ensureListening(channel: string): Promise<void> {
    await this.connect();
    const client = this.client;
    if (client && !this.listening.has(channel)) {
      await listen(client, channel);
      this.listening.add(channel);
    }
  }

  private connect(): Promise<void> {
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
        if (this.client === client) {
          this.client = undefined;
          this.listening = new Set();
        }
        client.release(true);
      };
      client.on("notification", (msg) => {
        if (!msg.payload) return;
        if (msg.channel === EVENTS_CHANNEL) {
          for (const wake of this.subscribers.get(msg.payload) ?? []) wake();
          return;
        }
        for (const onPayload of this.channels.get(msg.channel) ?? []) onPayload(msg.payload);
      });
      client.on("error", (err) => {
        if (dropped) return;
        this.log.warn(
          { err },
          "LISTEN session lost; reconnecting (streams poll and Stops' notices wait meanwhile)",
        );
        drop();
        // Wake everyone: they re-read from their cursors, so nothing is missed.
        for (const set of this.subscribers.values()) for (const wake of set) wake();
        // At once: a cancel NOTIFY sent while nobody listens is lost to this process (its
        // attempts learn of the Stop at their next write), so the gap is kept short.
        this.relisten(0);
      });
      const channels = this.wanted();
      try {
        for (const channel of channels) await listen(client, channel);
      } catch (err) {
        drop();
        throw err;
      }
      if (this.closed) return drop();
      this.client = client;
      this.listening = new Set(channels);
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
  private relisten(delayMs: number): void {
    setTimeout(() => {
      if (this.closed || this.client || (this.subscribers.size === 0 && this.channels.size === 0))
        return;
      this.connect().then(
        // Whatever was notified while nobody listened is found by re-reading.
        () => {
          for (const set of this.subscribers.values()) for (const wake of set) wake();
        },
        () => this.relisten(RECONNECT_MS),
      );
    }, delayMs).unref();
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

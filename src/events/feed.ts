/**
 * One shared reader per table per process, fanning the table's events out to every SSE
 * stream of that table. Invariants:
 * - per table and process, at most one sequence-and-read pass is in flight and at most one
 *   more is pending, whatever the number of streams or notifications: a wake that arrives
 *   during a pass only marks the next one (a NOTIFY storm costs two passes, not one each);
 * - a pass delivers every sequenced event above the shared cursor, in position order, and
 *   advances the cursor in the same synchronous step as the fan-out, so a stream that
 *   joins with a cursor at or above the shared cursor misses nothing (see stream.ts);
 * - frames are encoded once per event and the same bytes go to every stream;
 * - the feed exists while it has a subscriber (a stream catching up counts): created on
 *   the first, closed (LISTEN wake-up and safety poll dropped) on the last.
 * A failed pass is logged and retried on the next wake or safety poll; the cursor only
 * moves past events that were fanned out, so nothing is lost to it.
 */
import type { Db } from "@db/client";
import type { Logger } from "@/config/log";
import { eventBounds, eventsAfter, type StoredEvent } from "@/store/events/read";
import { sequenceEvents } from "@/store/events/sequence";
import type { EventHub } from "./hub";

export const FEED_BATCH = 500;
const SAFETY_POLL_MS = 5_000;

const encoder = new TextEncoder();

export interface Frame {
  seq: number;
  bytes: Uint8Array;
}

export function encodeFrame(id: number, event: string, data: unknown): Uint8Array {
  return encoder.encode(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export function toFrames(events: StoredEvent[]): Frame[] {
  return events.map((e) => ({ seq: e.seq, bytes: encodeFrame(e.seq, e.kind, e.data) }));
}

/** Counts that tests and the load script read: they must not grow with the stream count. */
export interface FeedStats {
  /** Sequence transactions run by feeds (each takes the table's advisory lock). */
  sequenceRuns: number;
  /** Batched reads of new events by feeds. */
  reads: number;
  /** The most passes ever in flight at once for one table (the invariant says 1). */
  maxInFlight: number;
}

export interface FeedOptions {
  db: Db;
  hub: EventHub;
  log: Logger;
  /** 0 turns the safety poll off (tests that count passes). */
  safetyPollMs?: number;
}

/**
 * A live receiver: gets each batch of frames above the shared cursor, synchronously, with
 * the batch's bytes joined once for all streams (one write per stream per pass, not one
 * per event: with hundreds of streams the writes are the fan-out's cost).
 */
export type Deliver = (frames: Frame[], joined: Uint8Array) => void;

export function joinFrames(frames: Frame[]): Uint8Array {
  const out = new Uint8Array(frames.reduce((n, f) => n + f.bytes.byteLength, 0));
  let at = 0;
  for (const f of frames) {
    out.set(f.bytes, at);
    at += f.bytes.byteLength;
  }
  return out;
}

class TableFeed {
  cursor = 0;
  /** Streams holding the feed open: live ones and ones still catching up. */
  holders = 0;
  readonly live = new Set<Deliver>();
  private running = false;
  private pending = false;
  private inFlight = 0;
  private closed = false;
  private unsubscribe: (() => void) | undefined;
  private poll: NodeJS.Timeout | undefined;
  readonly ready: Promise<void>;

  constructor(
    readonly tableId: string,
    private readonly opts: FeedOptions,
    private readonly stats: FeedStats,
  ) {
    this.ready = this.start();
  }

  private async start(): Promise<void> {
    // Subscribe before reading the start position: a notification in between then wakes a
    // pass instead of being lost (and a pass from an early cursor only re-reads).
    const unsubscribe = await this.opts.hub.subscribe(this.tableId, () => this.wake());
    if (this.closed) {
      unsubscribe();
      return;
    }
    this.unsubscribe = unsubscribe;
    const bounds = await eventBounds(this.opts.db, this.tableId);
    this.cursor = Math.max(this.cursor, bounds.newest);
    const every = this.opts.safetyPollMs ?? SAFETY_POLL_MS;
    if (every > 0) this.poll = setInterval(() => this.wake(), every).unref();
    // Events committed before the first subscriber came but never sequenced (their wake
    // went to no one) get their positions now.
    this.wake();
  }

  wake(): void {
    if (this.closed) return;
    if (this.running) {
      this.pending = true;
      return;
    }
    this.running = true;
    void this.drain();
  }

  private async drain(): Promise<void> {
    try {
      do {
        this.pending = false;
        await this.pass();
      } while (this.pending && !this.closed);
    } catch (err) {
      this.opts.log.warn(
        { err, tableId: this.tableId },
        "event feed pass failed; retrying on the next wake-up",
      );
    } finally {
      this.running = false;
    }
  }

  get busy(): boolean {
    return this.running;
  }

  private async pass(): Promise<void> {
    this.inFlight++;
    this.stats.maxInFlight = Math.max(this.stats.maxInFlight, this.inFlight);
    try {
      await this.read();
    } finally {
      this.inFlight--;
    }
  }

  private async read(): Promise<void> {
    this.stats.sequenceRuns++;
    await sequenceEvents(this.opts.db, this.tableId);
    for (;;) {
      if (this.closed) return;
      this.stats.reads++;
      const batch = await eventsAfter(this.opts.db, this.tableId, this.cursor, FEED_BATCH);
      if (this.closed) return;
      const frames = toFrames(batch.filter((e) => e.seq > this.cursor));
      const last = frames.at(-1);
      if (last) {
        // Cursor and fan-out in one synchronous step: see join() in the header.
        this.cursor = last.seq;
        const joined = joinFrames(frames);
        for (const deliver of [...this.live]) deliver(frames, joined);
      }
      if (batch.length < FEED_BATCH) return;
    }
  }

  close(): void {
    this.closed = true;
    if (this.poll) clearInterval(this.poll);
    this.unsubscribe?.();
    this.live.clear();
  }
}

/** A stream's hold on its table's feed. */
export interface FeedHandle {
  /** The shared cursor: a stream at or above it may join; below it, it reads the gap itself. */
  readonly cursor: number;
  /**
   * Joins the live fan-out if `cursor` is at or above the shared cursor (checked and
   * joined in one synchronous step, so no pass can fall in between); false = read more.
   */
  join(cursor: number, deliver: Deliver): boolean;
  /** Leaves the fan-out and lets the feed close if this was the last holder. */
  release(): void;
}

/** The per-process registry of table feeds. */
export class EventFeeds {
  readonly stats: FeedStats = { sequenceRuns: 0, reads: 0, maxInFlight: 0 };
  private feeds = new Map<string, TableFeed>();

  constructor(private readonly opts: FeedOptions) {}

  async attach(tableId: string): Promise<FeedHandle> {
    let feed = this.feeds.get(tableId);
    if (!feed) {
      feed = new TableFeed(tableId, this.opts, this.stats);
      this.feeds.set(tableId, feed);
    }
    // Counted before the await, so a last holder leaving meanwhile cannot close it.
    feed.holders++;
    const f = feed;
    let released = false;
    let joined: Deliver | undefined;
    const release = () => {
      if (released) return;
      released = true;
      if (joined) f.live.delete(joined);
      f.holders--;
      if (f.holders === 0) {
        f.close();
        if (this.feeds.get(tableId) === f) this.feeds.delete(tableId);
      }
    };
    try {
      await f.ready;
    } catch (err) {
      release();
      throw err;
    }
    return {
      get cursor() {
        return f.cursor;
      },
      join(cursor, deliver) {
        if (released || cursor < f.cursor) return false;
        joined = deliver;
        f.live.add(deliver);
        return true;
      },
      release,
    };
  }

  /** Wakes the table's feed if it has one (what a notification does). */
  wake(tableId: string): void {
    this.feeds.get(tableId)?.wake();
  }

  /** True when the table's feed has no pass running or pending (tests wait on it). */
  idle(tableId: string): boolean {
    const feed = this.feeds.get(tableId);
    return !feed?.busy;
  }

  close(): void {
    for (const feed of this.feeds.values()) feed.close();
    this.feeds.clear();
  }
}

/**
 * A table's event stream as Server-Sent Events. Invariants: events go out in stream
 * position order (commit order, see store/events/sequence.ts),
 * each once per connection; a reconnect with `Last-Event-ID` (or `?after=`) resumes right
 * after it; a cursor older than retention gets one `reset` event (the client refetches);
 * a comment heartbeat every 15 s keeps proxies from closing an idle stream.
 *
 * Streams do not sequence or poll the table themselves: the table's shared feed (feed.ts)
 * does once per wake-up for all of them. A stream whose cursor is behind the feed's reads
 * the gap from the database on its own, paced by its client, and joins the feed once its
 * cursor reaches the feed's; from then on it keeps only frames above its own cursor, so the
 * hand-over neither skips nor repeats. A client that stops reading is cut off once
 * `maxQueuedBytes` wait for it (logged); it reconnects with `Last-Event-ID` and catches up,
 * and the other streams never wait for it.
 */
import type { Db } from "@db/client";
import type { Logger } from "@/config/log";
import { eventBounds, eventsAfter } from "@/store/events/read";
import {
  type Deliver,
  type EventFeeds,
  encodeFrame,
  FEED_BATCH,
  type FeedHandle,
  type Frame,
  joinFrames,
  toFrames,
} from "./feed";

export const HEARTBEAT_MS = 15_000;
/** What a live stream may have queued for its client before it is cut off. */
export const MAX_QUEUED_BYTES = 4 * 1024 * 1024;
/** How much a stream queues before it waits for its client while catching up. */
const HIGH_WATER_BYTES = 64 * 1024;

export interface StreamOptions {
  db: Db;
  feeds: EventFeeds;
  log: Logger;
  tableId: string;
  /** The client's cursor, or null to start from now. */
  after: number | null;
  signal: AbortSignal;
  maxQueuedBytes?: number;
}

const encoder = new TextEncoder();

/** One connection's state, shared by its stream and its catch-up. */
interface Connection {
  readonly opts: StreamOptions;
  readonly feed: FeedHandle;
  /** The last position sent to the client. */
  cursor: number;
  finished: boolean;
  /** Resolves the catch-up's wait for room in the client's queue. */
  room: (() => void) | undefined;
}

export async function openEventStream(opts: StreamOptions): Promise<ReadableStream<Uint8Array>> {
  const bounds = await eventBounds(opts.db, opts.tableId);
  const needsReset = opts.after !== null && opts.after < bounds.oldest - 1;
  const conn: Connection = {
    opts,
    feed: await opts.feeds.attach(opts.tableId),
    cursor: needsReset ? bounds.newest : (opts.after ?? bounds.newest),
    finished: false,
    room: undefined,
  };
  const maxQueued = opts.maxQueuedBytes ?? MAX_QUEUED_BYTES;

  let heartbeat: NodeJS.Timeout | undefined;
  const finish = () => {
    if (conn.finished) return;
    conn.finished = true;
    clearInterval(heartbeat);
    conn.feed.release();
    conn.room?.();
  };
  if (opts.signal.aborted) {
    finish();
  }
  opts.signal.addEventListener("abort", finish, { once: true });

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const close = () => {
          finish();
          try {
            controller.close();
          } catch {
            // Already closed by the client going away.
          }
        };
        const send = (bytes: Uint8Array) => {
          if (!conn.finished) controller.enqueue(bytes);
        };
        const live = (frames: Frame[], joined: Uint8Array) => {
          sendLive(conn, send, frames, joined);
          const queued = -(controller.desiredSize ?? 0) + HIGH_WATER_BYTES;
          if (queued > maxQueued && !conn.finished) {
            opts.log.info(
              { tableId: opts.tableId, cursor: conn.cursor, queuedBytes: queued },
              "event stream cut off: its client fell too far behind (it resumes with Last-Event-ID)",
            );
            close();
          }
        };

        heartbeat = setInterval(() => send(encoder.encode(": heartbeat\n\n")), HEARTBEAT_MS);
        opts.signal.addEventListener("abort", close, { once: true });
        send(encoder.encode(": connected\nretry: 2000\n\n"));
        if (needsReset) send(resetFrame(conn.cursor));
        if (conn.finished) {
          close();
          return;
        }
        catchUp(conn, controller, send, live).catch((err: unknown) => {
          if (!conn.finished) opts.log.warn({ err, tableId: opts.tableId }, "event stream failed");
          close();
        });
      },
      pull() {
        const r = conn.room;
        conn.room = undefined;
        r?.();
      },
      cancel() {
        finish();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: HIGH_WATER_BYTES }),
  );
}

const resetFrame = (cursor: number) =>
  encodeFrame(cursor, "reset", { reason: "cursor older than retention", resumeFrom: cursor });

/** A pass's frames to a joined stream: only those above its cursor (all at once when it can). */
function sendLive(
  conn: Connection,
  send: (bytes: Uint8Array) => void,
  frames: Frame[],
  joined: Uint8Array,
): void {
  const first = frames[0];
  const last = frames.at(-1);
  if (first && last && first.seq > conn.cursor) {
    send(joined);
    conn.cursor = last.seq;
    return;
  }
  for (const f of frames) {
    if (f.seq <= conn.cursor) continue;
    send(f.bytes);
    conn.cursor = f.seq;
  }
}

/**
 * Reads the gap below the shared cursor, a batch at a time as the client takes it, until
 * the cursor reaches the feed's; then joins in the same tick as the check (join() refuses
 * if a pass moved the feed on meanwhile: read again).
 */
async function catchUp(
  conn: Connection,
  controller: ReadableStreamDefaultController<Uint8Array>,
  send: (bytes: Uint8Array) => void,
  live: Deliver,
): Promise<void> {
  const { opts, feed } = conn;
  while (!conn.finished) {
    if (feed.join(conn.cursor, live)) return;
    if ((controller.desiredSize ?? 1) <= 0)
      await new Promise<void>((resolve) => {
        conn.room = resolve;
      });
    if (conn.finished) return;
    const batch = await eventsAfter(opts.db, opts.tableId, conn.cursor, FEED_BATCH);
    if (conn.finished) return;
    const frames = toFrames(batch);
    const last = frames.at(-1);
    if (last) {
      send(joinFrames(frames));
      conn.cursor = last.seq;
    }
    if (batch.length === 0 && conn.cursor < feed.cursor) {
      // The feed is past positions the database no longer holds (pruned while this
      // stream caught up): the client must refetch, as for an old cursor.
      conn.cursor = feed.cursor;
      send(resetFrame(conn.cursor));
    }
  }
}

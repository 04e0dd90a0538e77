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
import { type EventFeeds, encodeFrame, FEED_BATCH, type Frame, joinFrames, toFrames } from "./feed";

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

export async function openEventStream(opts: StreamOptions): Promise<ReadableStream<Uint8Array>> {
  const bounds = await eventBounds(opts.db, opts.tableId);
  let cursor = opts.after ?? bounds.newest;
  const needsReset = opts.after !== null && opts.after < bounds.oldest - 1;
  if (needsReset) cursor = bounds.newest;
  const handle = await opts.feeds.attach(opts.tableId);
  const maxQueued = opts.maxQueuedBytes ?? MAX_QUEUED_BYTES;

  let finished = false;
  let heartbeat: NodeJS.Timeout | undefined;
  let room: (() => void) | undefined;
  const finish = () => {
    if (finished) return;
    finished = true;
    clearInterval(heartbeat);
    handle.release();
    room?.();
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
          if (!finished) controller.enqueue(bytes);
        };
        const live = (frames: Frame[], joined: Uint8Array) => {
          const first = frames[0];
          const last = frames.at(-1);
          if (first && last && first.seq > cursor) {
            send(joined);
            cursor = last.seq;
          } else {
            for (const f of frames) {
              if (f.seq <= cursor) continue;
              send(f.bytes);
              cursor = f.seq;
            }
          }
          const queued = -(controller.desiredSize ?? 0) + HIGH_WATER_BYTES;
          if (queued > maxQueued && !finished) {
            opts.log.info(
              { tableId: opts.tableId, cursor, queuedBytes: queued },
              "event stream cut off: its client fell too far behind (it resumes with Last-Event-ID)",
            );
            close();
          }
        };
        const catchUp = async () => {
          // Reads the gap below the shared cursor, a batch at a time as the client takes
          // it, until the cursor reaches the feed's; then joins in the same tick as the
          // check (join() refuses if a pass moved the feed on meanwhile: read again).
          while (!finished) {
            if (handle.join(cursor, live)) return;
            if ((controller.desiredSize ?? 1) <= 0)
              await new Promise<void>((resolve) => {
                room = resolve;
              });
            if (finished) return;
            const batch = await eventsAfter(opts.db, opts.tableId, cursor, FEED_BATCH);
            if (finished) return;
            const frames = toFrames(batch);
            const last = frames.at(-1);
            if (last) {
              send(joinFrames(frames));
              cursor = last.seq;
            }
            if (batch.length === 0 && cursor < handle.cursor) {
              // The feed is past positions the database no longer holds (pruned while
              // this stream caught up): the client must refetch, as for an old cursor.
              cursor = handle.cursor;
              send(
                encodeFrame(cursor, "reset", {
                  reason: "cursor older than retention",
                  resumeFrom: cursor,
                }),
              );
            }
          }
        };

        heartbeat = setInterval(() => send(encoder.encode(": heartbeat\n\n")), HEARTBEAT_MS);
        opts.signal.addEventListener("abort", close, { once: true });
        send(encoder.encode(": connected\nretry: 2000\n\n"));
        if (needsReset)
          send(
            encodeFrame(cursor, "reset", {
              reason: "cursor older than retention",
              resumeFrom: cursor,
            }),
          );
        if (finished) {
          close();
          return;
        }
        catchUp().catch((err: unknown) => {
          if (!finished) opts.log.warn({ err, tableId: opts.tableId }, "event stream failed");
          close();
        });
      },
      pull() {
        const r = room;
        room = undefined;
        r?.();
      },
      cancel() {
        finish();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: HIGH_WATER_BYTES }),
  );
}

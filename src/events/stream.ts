/**
 * A table's event stream as Server-Sent Events. Invariants: events go out in stream
 * position order (commit order, see store/events/sequence.ts),
 * each once per connection; a reconnect with `Last-Event-ID` (or `?after=`) resumes right
 * after it; a cursor older than retention gets one `reset` event (the client refetches);
 * a comment heartbeat every 15 s keeps proxies from closing an idle stream. Wake-ups come
 * from LISTEN/NOTIFY; a slow safety poll covers a listener that is reconnecting.
 */
import type { Db } from "../../db/client";
import type { Logger } from "../config/log";
import { eventBounds, eventsAfter } from "../store/events/read";
import { sequenceEvents } from "../store/events/sequence";
import type { EventHub } from "./hub";

export const HEARTBEAT_MS = 15_000;
const SAFETY_POLL_MS = 5_000;
const BATCH = 500;

export interface StreamOptions {
  db: Db;
  hub: EventHub;
  log: Logger;
  tableId: string;
  /** The client's cursor, or null to start from now. */
  after: number | null;
  signal: AbortSignal;
}

function frame(id: number, event: string, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export async function openEventStream(opts: StreamOptions): Promise<ReadableStream<Uint8Array>> {
  const encoder = new TextEncoder();
  await sequenceEvents(opts.db, opts.tableId);
  const bounds = await eventBounds(opts.db, opts.tableId);
  let cursor = opts.after ?? bounds.newest;
  const needsReset = opts.after !== null && opts.after < bounds.oldest - 1;
  if (needsReset) cursor = bounds.newest;

  let wake: () => void = () => {};
  let pending = true;
  let closed = false;
  const wakeUp = () => {
    pending = true;
    wake();
  };
  const unsubscribe = await opts.hub.subscribe(opts.tableId, wakeUp);

  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (text: string) => controller.enqueue(encoder.encode(text));
      const heartbeat = setInterval(() => send(": heartbeat\n\n"), HEARTBEAT_MS);
      const poll = setInterval(wakeUp, SAFETY_POLL_MS);
      const stop = () => {
        clearInterval(heartbeat);
        clearInterval(poll);
        unsubscribe();
        wake();
      };
      opts.signal.addEventListener("abort", stop, { once: true });
      send(": connected\nretry: 2000\n\n");
      if (needsReset)
        send(frame(cursor, "reset", { reason: "cursor older than retention", resumeFrom: cursor }));
      try {
        while (!opts.signal.aborted && !closed) {
          if (!pending) {
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
            continue;
          }
          pending = false;
          await sequenceEvents(opts.db, opts.tableId);
          for (;;) {
            const batch = await eventsAfter(opts.db, opts.tableId, cursor, BATCH);
            for (const e of batch) {
              send(frame(e.seq, e.kind, e.data));
              cursor = e.seq;
            }
            if (batch.length < BATCH || opts.signal.aborted || closed) break;
          }
        }
      } catch (err) {
        if (!opts.signal.aborted)
          opts.log.warn({ err, tableId: opts.tableId }, "event stream failed");
      } finally {
        stop();
        try {
          controller.close();
        } catch {
          // Already closed by the client going away.
        }
      }
    },
    cancel() {
      closed = true;
      unsubscribe();
      wake();
    },
  });
}

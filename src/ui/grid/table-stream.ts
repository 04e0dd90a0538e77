/**
 * A table's event stream in the browser. It is opened before the rows are read and its
 * events are held until `release()` (the read is in), then handed over in order, so
 * nothing that happened in between is lost or applied on top of a newer state. The
 * browser's EventSource reconnects by itself with `Last-Event-ID`; if the server closed
 * it for good, it is reopened with `?after=` the last event seen, two seconds later.
 * A kind this page does not know, or data that does not fit, is skipped, not guessed at.
 */
import { parseTableEvent, type TableEvent } from "@/contracts/events";
import { tableEventsUrl } from "../api-raw";

export type StreamState = "connecting" | "live" | "reconnecting";

const KINDS = ["cell", "rows", "schema", "dispatch", "limit", "progress", "reset"];

export interface TableStream {
  /** Hands over the events held so far, and every later one as it comes. */
  release(): void;
  close(): void;
}

export function openTableStream(
  tableId: string,
  on: { event(event: TableEvent): void; state(state: StreamState): void },
): TableStream {
  let closed = false;
  let source: EventSource | null = null;
  let lastSeq: string | null = null;
  let held: MessageEvent[] | null = [];
  let retry: ReturnType<typeof setTimeout> | null = null;

  const handle = (e: MessageEvent) => {
    if (e.lastEventId) lastSeq = e.lastEventId;
    if (held) {
      held.push(e);
      return;
    }
    const event = eventOf(e);
    if (event) on.event(event);
  };
  const open = () => {
    if (closed) return;
    source = new EventSource(tableEventsUrl(tableId, lastSeq));
    for (const type of KINDS) source.addEventListener(type, handle as EventListener);
    source.onopen = () => on.state("live");
    source.onerror = () => {
      if (!source || source.readyState === EventSource.CLOSED) {
        // The server refused or the connection broke for good: reopen from where we were.
        on.state("reconnecting");
        source?.close();
        retry = setTimeout(open, 2_000);
      } else on.state("reconnecting");
    };
  };

  open();
  return {
    release() {
      const buffered = held ?? [];
      held = null;
      for (const e of buffered) handle(e);
    },
    close() {
      closed = true;
      if (retry) clearTimeout(retry);
      source?.close();
    },
  };
}

function eventOf(e: MessageEvent): TableEvent | null {
  let raw: unknown;
  try {
    raw = JSON.parse(String(e.data));
  } catch {
    return null;
  }
  return parseTableEvent(e.type, raw);
}

/** The notice a `limit` event shows. */
export function limitNotice(data: Extract<TableEvent, { event: "limit" }>["data"]): string {
  const cap = data.reason === "run_credit_cap";
  return `${cap ? "Credit cap reached" : "Usage limit reached"} — ${data.message}`;
}

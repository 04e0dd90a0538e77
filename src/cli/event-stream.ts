/**
 * A table's event stream (Server-Sent Events) as the CLI reads it. Guarantees: events are
 * handed over in stream order, each once, even across reconnects (a dropped or silent
 * connection is reopened with `Last-Event-ID` set to the last event handed over); the
 * next chunk is read only after the handler is done with the last event (so a slow stdout
 * slows the reading, not the memory). A refusal that retrying cannot fix (bad key, unknown
 * table) ends the tail with the API's message; a server gone away is retried.
 */
import { sleep } from "@/domain/sleep";
import type { Connection } from "./connection";
import { refusalOf } from "./connection";
import { type CliFailure, type CliResult, done } from "./failure";

export interface StreamEvent {
  /** The stream position (`id:`), a number for this API. */
  id: number;
  event: string;
  /** `data:` parsed as JSON (the text itself if it is not JSON). */
  data: unknown;
}

/**
 * Splits `buffer` into complete events and the unfinished rest. Comment lines (`:`, the
 * heartbeat) and events without an id are skipped; `data:` lines join with newlines.
 */
export function parseEvents(buffer: string): { events: StreamEvent[]; rest: string } {
  const events: StreamEvent[] = [];
  // A CR at the very end may be the first half of a CRLF: it waits for the next chunk.
  const text = buffer.replace(/\r\n|\r(?!$)/g, "\n");
  let start = 0;
  for (let end = text.indexOf("\n\n"); end >= 0; end = text.indexOf("\n\n", start)) {
    const block = text.slice(start, end);
    start = end + 2;
    let id: string | undefined;
    let event = "message";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line === "" || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "id") id = value;
      else if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    const seq = Number(id);
    if (id === undefined || !Number.isSafeInteger(seq)) continue;
    const raw = data.join("\n");
    let parsed: unknown = raw;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // Not JSON: handed over as the text.
    }
    events.push({ id: seq, event, data: parsed });
  }
  return { events, rest: text.slice(start) };
}

export interface TailOptions {
  conn: Connection;
  tableId: string;
  /** Start after this position; undefined: from now. */
  after?: number;
  /** Ends the tail (ok). */
  signal: AbortSignal;
  onEvent: (e: StreamEvent) => void | Promise<void>;
  /** Told when a connection drops and another is being opened (for a note on stderr). */
  onReconnect?: (why: string) => void;
  /** No bytes for this long (the server sends a heartbeat every 15 s): reconnect. */
  idleMs?: number;
}

const RETRY_MS = [500, 1_000, 2_000, 5_000];

/** Tails the stream until `signal` aborts (ok) or the API refuses it (the failure). */
export async function tailEvents(opts: TailOptions): Promise<CliResult> {
  let last = opts.after;
  let failures = 0;
  while (!opts.signal.aborted) {
    const outcome = await readOnce(opts, last, (seq) => {
      last = seq;
      failures = 0;
    });
    if (opts.signal.aborted) break;
    if (outcome.kind === "refused") return { ok: false, reason: outcome.failure };
    opts.onReconnect?.(outcome.why);
    const wait = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)] ?? 5_000;
    failures += 1;
    // Ctrl-C ends the wait early, and then the loop: a way to end, not a failure.
    await sleep(wait, opts.signal).catch(() => undefined);
  }
  return done;
}

type ReadOutcome = { kind: "dropped"; why: string } | { kind: "refused"; failure: CliFailure };

async function readOnce(
  opts: TailOptions,
  after: number | undefined,
  seen: (seq: number) => void,
): Promise<ReadOutcome> {
  const connection = new AbortController();
  const abort = () => connection.abort();
  opts.signal.addEventListener("abort", abort, { once: true });
  let idle: NodeJS.Timeout | undefined;
  let silent = false;
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      silent = true;
      connection.abort();
    }, opts.idleMs ?? 45_000);
  };
  try {
    arm();
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (after !== undefined) headers["last-event-id"] = String(after);
    const res = await opts.conn.request(`/api/tables/${encodeURIComponent(opts.tableId)}/events`, {
      headers,
      signal: connection.signal,
    });
    if (!res.ok) return { kind: "dropped", why: res.reason.message };
    if (!res.value.ok) {
      const failure = await refusalOf(res.value);
      // Only a server in trouble is worth retrying; a 4xx will not change by itself.
      return res.value.status >= 500
        ? { kind: "dropped", why: failure.message }
        : { kind: "refused", failure };
    }
    if (!res.value.body) return { kind: "dropped", why: "the stream had no body" };
    const reader = res.value.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return { kind: "dropped", why: "the server closed the stream" };
      arm();
      buffer += decoder.decode(chunk.value, { stream: true });
      const parsed = parseEvents(buffer);
      buffer = parsed.rest;
      for (const e of parsed.events) {
        await opts.onEvent(e);
        seen(e.id);
      }
    }
  } catch (err) {
    if (silent) return { kind: "dropped", why: "no heartbeat from the server" };
    return { kind: "dropped", why: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(idle);
    opts.signal.removeEventListener("abort", abort);
    connection.abort();
  }
}

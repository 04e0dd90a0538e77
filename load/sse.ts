/**
 * SSE clients for the load script: plain http clients that keep the `id:` of every event
 * they receive, and reconnect with `Last-Event-ID` after a drop, as a browser does. What
 * each one received is later compared with the table's events in the database.
 */
import http from "node:http";

/** What one client received: the part that is judged, and that crosses threads. */
export interface ClientRecord {
  ids: number[];
  reconnects: number;
  resets: number;
  errors: string[];
}

export interface SseClient extends ClientRecord {
  connected: Promise<void>;
  last(): number;
  close(): void;
}

export function sseClient(port: number, tableId: string, key: string): SseClient {
  const ids: number[] = [];
  const errors: string[] = [];
  let closed = false;
  let req: http.ClientRequest | undefined;
  let markConnected: () => void = () => {};
  const connected = new Promise<void>((resolve) => {
    markConnected = resolve;
  });
  const client: SseClient = {
    ids,
    connected,
    reconnects: 0,
    resets: 0,
    errors,
    last: () => ids.at(-1) ?? 0,
    close() {
      closed = true;
      req?.destroy();
    },
  };
  const connect = () => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (ids.length > 0) headers["last-event-id"] = String(client.last());
    req = http.get(
      { host: "127.0.0.1", port, path: `/api/tables/${tableId}/events`, headers, agent: false },
      (res) => {
        if (res.statusCode !== 200) {
          errors.push(`status ${res.statusCode}`);
          res.resume();
          return;
        }
        res.setEncoding("utf8");
        let buffer = "";
        res.on("data", (chunk: string) => {
          buffer += chunk;
          let cut = buffer.indexOf("\n\n");
          while (cut >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            cut = buffer.indexOf("\n\n");
            if (block.startsWith(": connected")) markConnected();
            // Only the id and the event name are needed: no JSON parsing on this side.
            if (!block.startsWith("id: ")) continue;
            const nl = block.indexOf("\n");
            const id = Number(block.slice(4, nl));
            if (block.startsWith("event: reset", nl + 1)) client.resets++;
            else ids.push(id);
          }
        });
        res.on("end", () => reconnect("stream ended"));
        res.on("error", () => reconnect("stream error"));
      },
    );
    req.on("error", (err) => reconnect(err.message));
  };
  const reconnect = (why: string) => {
    if (closed) return;
    client.reconnects++;
    if (client.reconnects <= 20) errors.push(`reconnect: ${why}`);
    // The server's `retry:` hint is 2 s; a shorter pause keeps the load run short.
    setTimeout(connect, 200).unref();
  };
  connect();
  return client;
}

export interface Completeness {
  clients: number;
  expectedEvents: number;
  complete: number;
  missing: number;
  duplicates: number;
  outOfOrder: number;
  reconnects: number;
  resets: number;
  errors: string[];
}

/** Each client's ids against the table's (sorted) event ids after the start position. */
export function completeness(clients: ClientRecord[], expected: number[]): Completeness {
  const want = new Set(expected);
  const out: Completeness = {
    clients: clients.length,
    expectedEvents: expected.length,
    complete: 0,
    missing: 0,
    duplicates: 0,
    outOfOrder: 0,
    reconnects: 0,
    resets: 0,
    errors: [],
  };
  for (const c of clients) {
    const seen = new Set<number>();
    let dup = 0;
    let disorder = 0;
    for (let i = 0; i < c.ids.length; i++) {
      const id = c.ids[i] ?? 0;
      if (seen.has(id)) dup++;
      seen.add(id);
      if (i > 0 && id <= (c.ids[i - 1] ?? 0)) disorder++;
    }
    let missing = 0;
    for (const id of want) if (!seen.has(id)) missing++;
    out.missing += missing;
    out.duplicates += dup;
    out.outOfOrder += disorder;
    out.reconnects += c.reconnects;
    out.resets += c.resets;
    if (missing === 0 && dup === 0 && disorder === 0) out.complete++;
    for (const e of c.errors.slice(0, 3)) if (out.errors.length < 20) out.errors.push(e);
  }
  return out;
}

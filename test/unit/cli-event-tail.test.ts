/**
 * The CLI's event tail against a small HTTP server that behaves like the events route:
 * a dropped stream is reopened after the last event handed over, and a refusal ends it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { connectionFromEnv } from "@/cli/connection";
import { type StreamEvent, tailEvents } from "@/cli/event-stream";

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

async function serve(handler: http.RequestListener): Promise<string> {
  server = http.createServer(handler);
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function connection(url: string) {
  const conn = connectionFromEnv({ CELLFLOW_URL: url, CELLFLOW_API_KEY: "cf_test" });
  if (!conn.ok) throw new Error(conn.reason.message);
  return conn.value;
}

describe("tailing a table's events", () => {
  it("a dropped stream is reopened with Last-Event-ID, so nothing repeats or goes missing", async () => {
    const asked: (string | undefined)[] = [];
    const keys = new Set<string | undefined>();
    const url = await serve((req, res) => {
      asked.push(req.headers["last-event-id"] as string | undefined);
      keys.add(req.headers.authorization);
      res.writeHead(200, { "content-type": "text/event-stream" });
      const after = Number(req.headers["last-event-id"] ?? 0);
      // Each connection sends two events (the second split across writes), then drops.
      res.write(
        `: heartbeat\n\nid: ${after + 1}\nevent: cell\ndata: {"n":${after + 1}}\n\nid: ${after + 2}\nev`,
      );
      res.end(`ent: cell\ndata: {"n":${after + 2}}\n\n`);
    });
    const stop = new AbortController();
    const got: StreamEvent[] = [];
    const dropped: string[] = [];
    const ended = await tailEvents({
      conn: connection(url),
      tableId: "tbl_1",
      after: 10,
      signal: stop.signal,
      onEvent: (e) => {
        got.push(e);
        if (got.length === 6) stop.abort();
      },
      onReconnect: (why) => dropped.push(why),
    });
    expect(ended.ok).toBe(true);
    expect(got.map((e) => e.id)).toEqual([11, 12, 13, 14, 15, 16]);
    expect(got[0]).toEqual({ id: 11, event: "cell", data: { n: 11 } });
    expect(asked).toEqual(["10", "12", "14"]);
    expect([...keys]).toEqual(["Bearer cf_test"]);
    expect(dropped.length).toBe(2);
  });

  it("a refusal (bad key, unknown table) ends the tail with the API's message, not a retry", async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls += 1;
      res.writeHead(401, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ error: { code: "unauthorized", message: "The API key is not valid" } }),
      );
    });
    const ended = await tailEvents({
      conn: connection(url),
      tableId: "tbl_1",
      signal: new AbortController().signal,
      onEvent: () => {},
    });
    expect(ended).toEqual({
      ok: false,
      reason: { exit: 1, status: 401, message: "The API key is not valid (HTTP 401 unauthorized)" },
    });
    expect(calls).toBe(1);
  });

  it("a stream that goes silent past the heartbeat is reopened", async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls += 1;
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (calls === 1)
        res.write("id: 1\nevent: cell\ndata: {}\n\n"); // then nothing, ever
      else res.end("id: 2\nevent: cell\ndata: {}\n\n");
    });
    const stop = new AbortController();
    const got: number[] = [];
    const dropped: string[] = [];
    await tailEvents({
      conn: connection(url),
      tableId: "tbl_1",
      signal: stop.signal,
      idleMs: 300,
      onEvent: (e) => {
        got.push(e.id);
        if (e.id === 2) stop.abort();
      },
      onReconnect: (why) => dropped.push(why),
    });
    expect(got).toEqual([1, 2]);
    expect(dropped[0]).toBe("no heartbeat from the server");
  });
});

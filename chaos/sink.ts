/**
 * The loopback "sink" the chaos workloads' http blocks and enrichments call: it answers
 * per path and records every arrival (path, query, `Idempotency-Key`, time). Duplicate
 * side effects are counted from it, by key: the http block sends
 * `<executionId>:<blockId>`, the same on every retry and re-drive of that block.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Arrival {
  path: string;
  query: string;
  key: string | undefined;
  at: number;
}

export type Answer = (query: URLSearchParams) => {
  status: number;
  body: string;
  contentType: string;
};

export interface Sink {
  url: string;
  arrivals: Arrival[];
  on(path: string, answer: Answer): void;
  close(): Promise<void>;
}

/** `latencyMs`: every answer waits this long, so calls are in flight when a fault lands. */
export async function startSink(latencyMs = 0): Promise<Sink> {
  const arrivals: Arrival[] = [];
  const answers = new Map<string, Answer>();
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://sink");
    const key = req.headers["idempotency-key"];
    arrivals.push({
      path: u.pathname,
      query: u.search,
      key: typeof key === "string" ? key : undefined,
      at: Date.now(),
    });
    req.resume();
    const answer = answers.get(u.pathname);
    const reply = () => {
      if (res.destroyed) return;
      const a = answer?.(u.searchParams) ?? {
        status: 404,
        body: '{"error":"no such path"}',
        contentType: "application/json",
      };
      res.writeHead(a.status, { "content-type": a.contentType });
      res.end(a.body);
    };
    if (latencyMs > 0) setTimeout(reply, latencyMs);
    else reply();
  });
  // Many carriers keep connections open between calls; keep them rather than churn.
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    on: (path, answer) => answers.set(path, answer),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A JSON answer. */
export const json = (value: unknown) => ({
  status: 200,
  body: JSON.stringify(value),
  contentType: "application/json",
});

/**
 * The loopback "sink" the chaos workloads' http blocks and enrichments call: it answers
 * per path and records every arrival (path, query, `Idempotency-Key`, time) and every
 * answer it sent (path, query, status, time). Duplicate side effects are counted from the
 * arrivals, by key: the http block sends `<executionId>:<blockId>`, the same on every
 * retry and re-drive of that block. The money judge reads the answers: a paid provider's
 * answer is what a charge must stand on.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Arrival {
  path: string;
  query: string;
  key: string | undefined;
  at: number;
}

/** An answer the sink sent: written to a connection still open when it was ready. */
export interface Answered {
  path: string;
  query: string;
  status: number;
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
  answers: Answered[];
  /** `latencyMs`: this path's own answer latency instead of the sink's. */
  on(path: string, answer: Answer, latencyMs?: number): void;
  close(): Promise<void>;
}

/** `latencyMs`: every answer waits this long, so calls are in flight when a fault lands. */
export async function startSink(latencyMs = 0): Promise<Sink> {
  const arrivals: Arrival[] = [];
  const answered: Answered[] = [];
  const answers = new Map<string, { answer: Answer; latencyMs: number }>();
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
    const route = answers.get(u.pathname);
    const reply = () => {
      // The caller hung up (its worker was killed): no answer was sent.
      if (res.destroyed) return;
      const a = route?.answer(u.searchParams) ?? {
        status: 404,
        body: '{"error":"no such path"}',
        contentType: "application/json",
      };
      answered.push({ path: u.pathname, query: u.search, status: a.status, at: Date.now() });
      res.writeHead(a.status, { "content-type": a.contentType });
      res.end(a.body);
    };
    const wait = route?.latencyMs ?? latencyMs;
    if (wait > 0) setTimeout(reply, wait);
    else reply();
  });
  // Many carriers keep connections open between calls; keep them rather than churn.
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    answers: answered,
    on: (path, answer, ms) => answers.set(path, { answer, latencyMs: ms ?? latencyMs }),
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

/**
 * A loopback HTTP server standing in for the remote endpoints workflows call. Each path
 * is a behaviour; every request is recorded (path, time, whether its socket closed
 * before an answer), and in-flight requests are counted per path.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Hit {
  path: string;
  query: URLSearchParams;
  at: number;
  headers: http.IncomingHttpHeaders;
  aborted: boolean;
}

export type Behaviour = (
  hit: Hit,
  nth: number,
) => Promise<{ status: number; body?: unknown; headers?: Record<string, string> } | "hang">;

export interface Endpoint {
  url: string;
  hits: Hit[];
  hitsOf(path: string): Hit[];
  maxInFlight(path: string): number;
  on(path: string, behaviour: Behaviour): void;
  close(): Promise<void>;
}

export async function startEndpoint(): Promise<Endpoint> {
  const hits: Hit[] = [];
  const behaviours = new Map<string, Behaviour>();
  const inFlight = new Map<string, number>();
  const peak = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://x");
    const hit: Hit = {
      path: u.pathname,
      query: u.searchParams,
      at: Date.now(),
      headers: req.headers,
      aborted: false,
    };
    hits.push(hit);
    const nth = hits.filter((h) => h.path === hit.path).length;
    inFlight.set(hit.path, (inFlight.get(hit.path) ?? 0) + 1);
    peak.set(hit.path, Math.max(peak.get(hit.path) ?? 0, inFlight.get(hit.path) ?? 0));
    const done = () => inFlight.set(hit.path, (inFlight.get(hit.path) ?? 1) - 1);
    res.on("close", () => {
      if (!res.writableFinished) hit.aborted = true;
      done();
    });
    req.resume();
    const fallback: Behaviour = async () => ({ status: 200, body: { ok: true } });
    const behaviour = behaviours.get(hit.path) ?? fallback;
    void behaviour(hit, nth).then((answer) => {
      if (answer === "hang" || res.destroyed) return;
      res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      res.end(JSON.stringify(answer.body ?? null));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    hitsOf: (path) => hits.filter((h) => h.path === path),
    maxInFlight: (path) => peak.get(path) ?? 0,
    on: (path, behaviour) => behaviours.set(path, behaviour),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

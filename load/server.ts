import http from "node:http";
import { Readable } from "node:stream";
import { closeDatabase } from "@db/instance";
import { closeBackend } from "@/backends/instance";
import { closeEventHub, getEventFeeds } from "@/events/instance";
import { sequenceStats } from "@/store/events/sequence";
import { resolveRoute } from "../test/helpers/api";

function stats(): unknown {
  const feeds = getEventFeeds();
  const cpu = process.cpuUsage();
  return {
    sequenceTransactions: sequenceStats.transactions,
    feeds: feeds.stats,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

function drainedOrClosed(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}

async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const method = req.method ?? "GET";
  if (url.pathname === "/__load/stats") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(stats()));
    return;
  }
  const found = await resolveRoute(url.pathname, method);
  if (found === "no route") {
    res.writeHead(404).end();
    return;
  }
  if (found === "no method") {
    res.writeHead(405).end();
    return;
  }
  // The request's signal aborts when its client goes away, as Next.js wires it.
  const abort = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) abort.abort();
  });
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === "string") headers.set(k, v);
    else if (Array.isArray(v)) for (const x of v) headers.append(k, x);
  }
  const hasBody = method !== "GET" && method !== "HEAD";
  const request = new Request(url, {
    method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
    signal: abort.signal,
    duplex: "half",
  } as RequestInit);
  const response = await found.handler(request, { params: Promise.resolve(found.params) });
  const out: Record<string, string> = {};
  response.headers.forEach((v, k) => {
    out[k] = v;
  });
  res.writeHead(response.status, out);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  abort.signal.addEventListener("abort", () => void reader.cancel().catch(() => {}), {
    once: true,
  });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      // Backpressure: a slow client stops the reads, so its stream's queue grows and the
      // stream cuts it off (src/events/stream.ts) instead of this process buffering.
      if (!res.write(value)) await drainedOrClosed(res);
    }
    res.end();
  } catch {
    res.destroy();
  }
}

const server = http.createServer((req, res) => {
  serve(req, res).catch((err: unknown) => {
    process.stderr.write(`load server: ${err instanceof Error ? err.message : String(err)}\n`);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
});
server.keepAliveTimeout = 60_000;

const port = Number(process.env.PORT ?? 0);
server.listen(port, "127.0.0.1", () => {
  const a = server.address();
  process.stdout.write(`load server listening on ${typeof a === "object" && a ? a.port : 0}\n`);
});

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    server.close();
    server.closeAllConnections();
    void Promise.allSettled([closeEventHub(), closeBackend()])
      .then(() => closeDatabase())
      .finally(() => process.exit(0));
  });
}

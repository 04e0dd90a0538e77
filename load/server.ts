/**
 * The API for the load script: the real route handlers under src/app/api served by a
 * plain node http server, in a process of its own (DATABASE_URL, PORT from the
 * environment). Not the Next.js server: a production build takes minutes on this machine
 * and rebuilds whenever src changes, and the handlers are the same modules either way;
 * what is left out is Next's own routing and request wrapping (see docs/load.md).
 * Routes are matched the way Next.js maps them: static segments before dynamic ones, the
 * catch-all last. `GET /__load/stats` answers the process's event counters.
 */
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import { closeDatabase } from "../db/instance";
import { closeBackend } from "../src/backends/instance";
import { closeEventHub, getEventFeeds } from "../src/events/instance";
import { sequenceStats } from "../src/store/events/sequence";

type Handler = (
  req: Request,
  ctx: { params: Promise<Record<string, string>> },
) => Promise<Response>;

interface Route {
  pattern: RegExp;
  names: string[];
  file: string;
  catchAll: boolean;
}

const API_DIR = path.resolve(import.meta.dirname, "../src/app/api");

function discover(): Route[] {
  const out: Route[] = [];
  const walk = (dir: string, segments: string[]) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(path.join(dir, entry.name), [...segments, entry.name]);
      else if (entry.name === "route.ts") {
        const names: string[] = [];
        let catchAll = false;
        const parts = segments.map((s) => {
          if (s.startsWith("[...")) {
            catchAll = true;
            names.push(s.slice(4, -1));
            return "(.+)";
          }
          if (s.startsWith("[")) {
            names.push(s.slice(1, -1));
            return "([^/]+)";
          }
          return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        });
        out.push({
          pattern: new RegExp(`^/api/${parts.join("/")}$`),
          names,
          file: path.join(dir, entry.name),
          catchAll,
        });
      }
    }
  };
  walk(API_DIR, []);
  return out.sort(
    (a, b) => Number(a.catchAll) - Number(b.catchAll) || a.names.length - b.names.length,
  );
}

const routes = discover();
const modules = new Map<string, Record<string, Handler | undefined>>();

async function handlerFor(
  pathname: string,
  method: string,
): Promise<{ handler: Handler; params: Record<string, string> } | undefined> {
  const route = routes.find((r) => r.pattern.test(pathname));
  if (!route) return undefined;
  const match = route.pattern.exec(pathname);
  const params: Record<string, string> = {};
  route.names.forEach((n, i) => {
    params[n] = decodeURIComponent(match?.[i + 1] ?? "");
  });
  let mod = modules.get(route.file);
  if (!mod) {
    mod = (await import(pathToFileURL(route.file).href)) as Record<string, Handler | undefined>;
    modules.set(route.file, mod);
  }
  const handler = mod[method];
  return handler ? { handler, params } : undefined;
}

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
  const found = await handlerFor(url.pathname, method);
  if (!found) {
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

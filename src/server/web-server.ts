/**
 * The HTTP server in front of Next.js's request handler. Invariant: closing it never
 * waits on an event stream (a stream only ends when its client leaves, and every client
 * resumes from its Last-Event-ID on the next server) or on an upgraded connection (the dev
 * server's hot-reload WebSocket, whose client reconnects by itself), and a request still
 * running gets a short grace period before its connection is cut, so shutdown has a bound.
 */
import http from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "@/config/log";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;

/** GET /api/tables/:id/events, the table event stream (src/app/api/tables/[id]/events). */
const EVENT_STREAM = /^\/api\/tables\/[^/]+\/events$/;

export interface WebServer {
  server: http.Server;
  /** Stops accepting, cuts event streams and idle sockets now, running requests after graceMs. */
  close(graceMs: number): Promise<void>;
}

export function createWebServer(handle: Handler, log: Logger): WebServer {
  const streams = new Set<http.ServerResponse>();
  const upgraded = new Set<Duplex>();
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && EVENT_STREAM.test((req.url ?? "").split("?")[0] ?? "")) {
      streams.add(res);
      res.once("close", () => streams.delete(res));
    }
    handle(req, res).catch((err: unknown) => {
      log.error({ err }, "unhandled request error");
      res.statusCode = 500;
      res.end();
    });
  });
  // Next.js's dev server starts answering upgrades (its hot-reload WebSocket) on its first
  // request. Track those sockets from the moment anyone listens, not before: with no
  // listener at all, Node treats an upgrade request as an ordinary one.
  const track = (_req: http.IncomingMessage, socket: Duplex) => {
    upgraded.add(socket);
    socket.once("close", () => upgraded.delete(socket));
  };
  let tracking = false;
  server.on("newListener", (event) => {
    if (event !== "upgrade" || tracking) return;
    tracking = true;
    server.on("upgrade", track);
  });
  return {
    server,
    async close(graceMs) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      for (const res of streams) res.destroy();
      for (const socket of upgraded) socket.destroy();
      const cut = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(cut);
    },
  };
}

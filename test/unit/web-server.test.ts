/**
 * Closing the web server is bounded by the request grace alone: a connection upgraded to
 * another protocol (the dev server's hot-reload WebSocket) is cut at once, as an event
 * stream is, and an upgrade is left to whoever handles upgrades.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { describe, expect, it } from "vitest";
import { log } from "@/config/log";
import { createWebServer } from "@/server/web-server";

describe("closing the web server", () => {
  it("cuts upgraded connections at once instead of waiting out the request grace", async () => {
    const web = createWebServer(async (_req, res) => {
      res.end("ok");
    }, log());
    // As Next.js's dev server does: it answers upgrades once it is asked to.
    web.server.on("upgrade", (_req: http.IncomingMessage, socket: Duplex) => {
      socket.write(
        "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n",
      );
    });
    await new Promise<void>((resolve) => web.server.listen(0, "127.0.0.1", resolve));
    const { port } = web.server.address() as AddressInfo;

    const clientSocket = await new Promise<Duplex>((resolve, reject) => {
      const req = http.request({
        host: "127.0.0.1",
        port,
        headers: { Connection: "Upgrade", Upgrade: "test" },
      });
      req.once("upgrade", (_res, socket) => resolve(socket));
      req.once("error", reject);
      req.end();
    });
    const clientClosed = new Promise<void>((resolve) =>
      clientSocket.once("close", () => resolve()),
    );
    clientSocket.on("error", () => {});

    const t0 = Date.now();
    // A grace far past the test's timeout: only cutting the upgraded socket lets this end.
    await web.close(60_000);
    await clientClosed;
    expect(Date.now() - t0).toBeLessThan(5_000);
  });
});

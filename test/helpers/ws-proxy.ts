/**
 * A WebSocket-to-TCP proxy in the shape of Neon's (`/v1?address=host:port`), so the neon
 * driver's WebSocket Pool can reach the embedded Postgres. Loopback targets only: it is a
 * test helper and must not become an open relay.
 */
import net from "node:net";
import { WebSocketServer } from "ws";

const ALLOWED_HOSTS = new Set(["127.0.0.1", "localhost"]);

export interface WsProxy {
  /** `host:port` for NEON_WS_PROXY / `createDatabase({ neonWsProxy })`. */
  address: string;
  stop(): Promise<void>;
}

export async function startWsProxy(): Promise<WsProxy> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/v1" });
  await new Promise<void>((resolve) => wss.once("listening", resolve));
  const sockets = new Set<net.Socket>();
  wss.on("connection", (client, req) => {
    const target = new URL(req.url ?? "", "http://proxy").searchParams.get("address") ?? "";
    const [host = "", port = ""] = target.split(":");
    if (!ALLOWED_HOSTS.has(host) || !/^\d+$/.test(port)) return client.close(1008, "forbidden");
    const tcp = net.connect(Number(port), host);
    sockets.add(tcp);
    const end = () => {
      tcp.destroy();
      client.terminate();
    };
    tcp.on("data", (chunk) => client.send(chunk));
    client.on("message", (data: Buffer) => tcp.write(data));
    tcp.on("close", () => {
      sockets.delete(tcp);
      end();
    });
    tcp.on("error", end);
    client.on("close", end).on("error", end);
  });
  const port = (wss.address() as net.AddressInfo).port;
  return {
    address: `127.0.0.1:${port}`,
    async stop() {
      for (const s of sockets) s.destroy();
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

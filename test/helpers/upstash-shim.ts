/**
 * A loopback HTTP server speaking the Upstash REST protocol (what @upstash/redis's
 * HttpClient sends) in front of a plain Redis, so the Upstash adapter runs unchanged in
 * tests: `POST /` with a command array, `/pipeline` and `/multi-exec` with arrays of
 * them; `Authorization: Bearer <token>`; with `Upstash-Encoding: base64`, string
 * results are base64-encoded (the client decodes them).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import IORedis from "ioredis";
import { runCommand } from "@/limits/rate/redis";

type Reply = { result?: unknown; error?: string };

function encode(value: unknown): unknown {
  if (typeof value === "string") return Buffer.from(value).toString("base64");
  if (Array.isArray(value)) return value.map(encode);
  return value;
}

export interface UpstashShim {
  url: string;
  token: string;
  close(): Promise<void>;
}

export async function startUpstashShim(
  redisUrl: string,
  token = "test-token",
): Promise<UpstashShim> {
  const client = new IORedis(redisUrl, { maxRetriesPerRequest: 1 });
  client.on("error", () => {});
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        if (req.headers.authorization !== `Bearer ${token}`) {
          res.writeHead(401, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: "Unauthorized" }));
          return;
        }
        const base64 = req.headers["upstash-encoding"] === "base64";
        const out = (r: Reply): Reply =>
          r.error !== undefined ? r : { result: base64 ? encode(r.result) : r.result };
        const body = JSON.parse(Buffer.concat(chunks).toString() || "[]") as unknown[];
        const path = (req.url ?? "/").split("?")[0];
        if (path === "/pipeline" || path === "/multi-exec") {
          const replies: Reply[] = [];
          for (const c of body as (string | number)[][])
            replies.push(out(await runCommand(client, c)));
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify(replies));
          return;
        }
        const reply = out(await runCommand(client, body as (string | number)[]));
        res.writeHead(reply.error !== undefined ? 400 : 200, {
          "content-type": "application/json",
        });
        res.end(JSON.stringify(reply));
      })().catch((err: unknown) => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: String(err) }));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      client.disconnect();
    },
  };
}

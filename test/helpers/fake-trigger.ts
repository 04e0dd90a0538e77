/**
 * A stand-in for the trigger.dev HTTP API (the remote service we cannot run here), only
 * for contract tests of our adapter: it records what the real SDK sends and answers the
 * minimal bodies the SDK accepts. `failNext` makes the next calls fail with a status.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface FakeTrigger {
  url: string;
  requests: RecordedRequest[];
  failNext(count: number, status: number): void;
  close(): Promise<void>;
}

export async function startFakeTrigger(): Promise<FakeTrigger> {
  const requests: RecordedRequest[] = [];
  let failures: { count: number; status: number } = { count: 0, status: 500 };
  let runs = 0;
  let batches = 0;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      const path = req.url ?? "";
      requests.push({ method: req.method ?? "", path, headers: req.headers, body });
      const reply = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify(value));
      };
      if (failures.count > 0) {
        failures.count--;
        return reply(failures.status, { error: "induced failure" }, { "retry-after": "0" });
      }
      if (req.method === "POST" && /^\/api\/v1\/tasks\/[^/]+\/trigger$/.test(path))
        return reply(200, { id: `run_${++runs}` });
      if (req.method === "POST" && path === "/api/v3/batches") {
        const parsed = JSON.parse(body) as { runCount: number };
        return reply(200, { id: `batch_${++batches}`, runCount: parsed.runCount, isCached: false });
      }
      const items = /^\/api\/v3\/batches\/([^/]+)\/items$/.exec(path);
      if (req.method === "POST" && items) {
        const accepted = body.split("\n").filter((l) => l.trim() !== "").length;
        runs += accepted;
        return reply(200, {
          id: items[1],
          itemsAccepted: accepted,
          itemsDeduplicated: 0,
          sealed: true,
        });
      }
      const cancel = /^\/api\/v2\/runs\/([^/]+)\/cancel$/.exec(path);
      if (req.method === "POST" && cancel) return reply(200, { id: cancel[1] });
      return reply(404, { error: `fake trigger.dev: no route for ${req.method} ${path}` });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext(count, status) {
      failures = { count, status };
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

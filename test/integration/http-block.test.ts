/**
 * The http block against real loopback servers (no mocked fetch): what it sends (rendered
 * templates, secrets, Idempotency-Key), what it makes of answers, how it fails, and that
 * an abort or an oversized answer really closes the connection.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpBlock } from "@/contracts/workflow";
import { MAX_RESPONSE_BYTES, runHttp } from "@/execution/blocks/http";
import { type BlockContext, BlockError } from "@/execution/blocks/types";

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

let server: http.Server;
let base: string;
let host: string;
const handlers = new Map<string, Handler>();
const received: Received[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const handler = handlers.get(path.split("/")[1] ?? "");
      if (handler) handler(req, res, body);
      else {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("no handler");
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  host = `127.0.0.1:${port}`;
  base = `http://${host}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const secrets = { TOKEN: "s3cr3t-token-value" };

function context(signal = new AbortController().signal): BlockContext {
  return {
    scope: {
      inputs: { n: 21 },
      row: { name: "Ada Lovelace", tags: ["x", "y"] },
      blocks: { prev: { id: 7 } },
      vars: { base },
      secrets,
    },
    signal,
    executionId: "exe_test123",
  };
}

function block(fields: Partial<HttpBlock>): HttpBlock {
  return { id: "call", type: "http", method: "GET", url: `${base}/ok`, ...fields };
}

async function failure(promise: Promise<unknown>): Promise<BlockError> {
  const err = await promise.then(
    () => {
      throw new Error("expected the block to fail");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BlockError);
  return err as BlockError;
}

function reply(status: number, headers: Record<string, string>, body: string): Handler {
  return (_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  };
}

handlers.set("echo", (req, res, body) => {
  res.writeHead(200, { "content-type": "application/json; charset=utf-8", "x-Custom": "Yes" });
  res.end(
    JSON.stringify({ method: req.method, url: req.url, body: body ? JSON.parse(body) : null }),
  );
});

describe("what the http block sends", () => {
  it("renders templates in url, headers and body; secrets reach the server; the Idempotency-Key is the execution's", async () => {
    const before = received.length;
    const result = await runHttp(
      block({
        method: "POST",
        url: "{{ vars.base }}/echo/{{ $encodeUrlComponent(row.name) }}?n={{ inputs.n * 2 }}",
        headers: {
          Authorization: "Bearer {{ secrets.TOKEN }}",
          "X-Prev": "{{ blocks.prev.id }}",
          "Idempotency-Key": "the caller's own is overridden",
        },
        body: {
          greeting: "hi {{ row.name }}",
          nested: [{ tags: "{{ row.tags }}" }, 5, true, null, "{{ inputs.n }}"],
          plain: "no template",
        },
      }),
      context(),
    );
    const req = received[before];
    expect(req?.method).toBe("POST");
    expect(req?.url).toBe("/echo/Ada%20Lovelace?n=42");
    expect(req?.headers.authorization).toBe("Bearer s3cr3t-token-value");
    expect(req?.headers["x-prev"]).toBe("7");
    expect(req?.headers["idempotency-key"]).toBe("exe_test123:call");
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(req?.body ?? "")).toEqual({
      greeting: "hi Ada Lovelace",
      nested: [{ tags: '["x","y"]' }, 5, true, null, "21"],
      plain: "no template",
    });
    expect(result.output).toMatchObject({
      status: 200,
      headers: { "content-type": "application/json; charset=utf-8", "x-custom": "Yes" },
      body: { method: "POST", url: "/echo/Ada%20Lovelace?n=42" },
    });
  });

  it("a request without a body sends no content-type, and still its Idempotency-Key", async () => {
    const before = received.length;
    await runHttp(block({ method: "DELETE", url: `${base}/echo` }), context());
    const req = received[before];
    expect(req?.method).toBe("DELETE");
    expect(req?.headers["content-type"]).toBeUndefined();
    expect(req?.headers["idempotency-key"]).toBe("exe_test123:call");
  });

  it("refuses, without retrying, what cannot be sent", async () => {
    const bad = [
      block({ url: "{{ $nosuchfunction() }}" }),
      block({ url: "not a url" }),
      block({ url: "ftp://example.test/x" }),
      block({ method: "GET", body: { a: 1 } }),
      block({ headers: { "bad header": "x" } }),
    ];
    for (const b of bad) {
      const err = await failure(runHttp(b, context()));
      expect(err.retryable, err.message).toBe(false);
      expect(err.blockId).toBe("call");
    }
  });
});

describe("what the http block makes of answers", () => {
  it("parses JSON bodies (any +json type), keeps text as text", async () => {
    handlers.set("problem", reply(200, { "content-type": "application/problem+json" }, '{"a":1}'));
    handlers.set("text", reply(200, { "content-type": "text/plain" }, '{"looks":"like json"}'));
    handlers.set("mislabeled", reply(200, { "content-type": "application/json" }, "not json"));
    handlers.set("empty", reply(204, {}, ""));
    const run = async (path: string) =>
      (await runHttp(block({ url: `${base}/${path}` }), context())).output;
    expect(await run("problem")).toMatchObject({ status: 200, body: { a: 1 } });
    expect(await run("text")).toMatchObject({ body: '{"looks":"like json"}' });
    expect(await run("mislabeled")).toMatchObject({ body: "not json" });
    expect(await run("empty")).toMatchObject({ status: 204, body: "" });
  });

  it("a non-2xx fails with status, host and an excerpt; only 408, 429 and 5xx are retryable", async () => {
    const cases: [number, boolean][] = [
      [400, false],
      [401, false],
      [404, false],
      [408, true],
      [422, false],
      [429, true],
      [500, true],
      [502, true],
    ];
    for (const [status, retryable] of cases) {
      handlers.set(
        "status",
        reply(status, { "content-type": "text/plain" }, `  went\n wrong ${"x".repeat(5000)}`),
      );
      const err = await failure(runHttp(block({ url: `${base}/status` }), context()));
      expect(err.message).toMatch(new RegExp(`^HTTP ${status} from ${host}: went wrong x+…$`));
      expect(err.message.length).toBeLessThan(400);
      expect(err.retryable, String(status)).toBe(retryable);
    }
  });

  it("429 with Retry-After: 2 asks for 2 s", async () => {
    handlers.set("limited", reply(429, { "retry-after": "2" }, "slow down"));
    const err = await failure(runHttp(block({ url: `${base}/limited` }), context()));
    expect(err.retryable).toBe(true);
    expect(err.retryAfterMs).toBe(2000);
  });

  it("503 with an HTTP-date Retry-After asks for the time until then", async () => {
    const at = new Date(Date.now() + 20_000);
    handlers.set("unavailable", reply(503, { "retry-after": at.toUTCString() }, ""));
    const err = await failure(runHttp(block({ url: `${base}/unavailable` }), context()));
    expect(err.retryable).toBe(true);
    // The date has whole seconds; the request took some time.
    expect(err.retryAfterMs).toBeGreaterThan(15_000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(20_000);
    expect(err.message).toBe(`HTTP 503 from ${host}`);
  });

  it("Retry-After is capped at 5 minutes and ignored on other statuses", async () => {
    handlers.set("long", reply(429, { "retry-after": "86400" }, ""));
    expect((await failure(runHttp(block({ url: `${base}/long` }), context()))).retryAfterMs).toBe(
      300_000,
    );
    handlers.set("other", reply(500, { "retry-after": "3" }, ""));
    expect(
      (await failure(runHttp(block({ url: `${base}/other` }), context()))).retryAfterMs,
    ).toBeUndefined();
  });

  it("a refused connection is a retryable failure naming the cause", async () => {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((r) => probe.close(() => r()));
    const err = await failure(runHttp(block({ url: `http://127.0.0.1:${port}/x` }), context()));
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/ECONNREFUSED/);
  });
});

/** A handler that sends headers and then body chunks for as long as the client reads. */
function endless(opts: { chunk?: number; stopAfterFirst?: boolean } = {}): {
  handler: Handler;
  firstChunk: Promise<void>;
  closed: Promise<void>;
} {
  let onFirst = () => {};
  let onClosed = () => {};
  const firstChunk = new Promise<void>((r) => {
    onFirst = r;
  });
  const closed = new Promise<void>((r) => {
    onClosed = r;
  });
  const handler: Handler = (req, res) => {
    req.socket.once("close", () => onClosed());
    res.writeHead(200, { "content-type": "application/octet-stream" });
    const piece = Buffer.alloc(opts.chunk ?? 64 * 1024, 0x61);
    const pump = () => {
      let more = true;
      while (more && !res.destroyed) more = res.write(piece) && !opts.stopAfterFirst;
      onFirst();
      // Written until the socket pushes back, then again when it drains: only a reader
      // that stops reading (or closes) ends this.
      if (!opts.stopAfterFirst && !res.destroyed) res.once("drain", pump);
    };
    pump();
  };
  return { handler, firstChunk, closed };
}

describe("what ends a request early", () => {
  it("aborting the signal mid-response closes the socket and rejects at once with the reason", async () => {
    const stream = endless({ chunk: 16, stopAfterFirst: true });
    handlers.set("hang", stream.handler);
    const controller = new AbortController();
    const running = runHttp(block({ url: `${base}/hang` }), context(controller.signal));
    const outcome = running.then(
      () => "resolved",
      (e: unknown) => e,
    );
    await stream.firstChunk;
    const reason = new Error("stopped by the test");
    const abortedAt = Date.now();
    controller.abort(reason);
    expect(await outcome).toBe(reason);
    expect(Date.now() - abortedAt).toBeLessThan(1_000);
    await stream.closed;
  });

  it("an already aborted signal sends nothing", async () => {
    const before = received.length;
    const controller = new AbortController();
    const reason = new Error("too late");
    controller.abort(reason);
    await expect(runHttp(block({ url: `${base}/echo` }), context(controller.signal))).rejects.toBe(
      reason,
    );
    expect(received.length).toBe(before);
  });

  it("a body over 5 MiB fails without being held, and the connection is closed", async () => {
    const stream = endless();
    handlers.set("huge", stream.handler);
    const err = await failure(runHttp(block({ url: `${base}/huge` }), context()));
    expect(err.message).toBe(
      `the response from ${host} is larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB; it was not read`,
    );
    expect(err.retryable).toBe(false);
    await stream.closed;
  });

  it("a declared Content-Length over 5 MiB fails before reading", async () => {
    let closed = () => {};
    const socketClosed = new Promise<void>((r) => {
      closed = r;
    });
    handlers.set("declared", (req, res) => {
      req.socket.once("close", () => closed());
      res.writeHead(200, { "content-length": String(MAX_RESPONSE_BYTES + 1) });
      res.write("a");
    });
    const err = await failure(runHttp(block({ url: `${base}/declared` }), context()));
    expect(err.message).toMatch(/larger than 5 MiB/);
    await socketClosed;
  });
});

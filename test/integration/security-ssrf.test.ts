/**
 * The private-network guard (CELLFLOW_ALLOW_PRIVATE_NETWORK=0), end to end: real cells run
 * by an in-process worker against a real loopback server. Loopback is the only network
 * here, so the test's destination policy stands in for the world: the names
 * `api.public.test` and `cdn.public.test` resolve to the loopback server and count as
 * public (that is how "an allowed server" exists at all), every other answer is judged by
 * the real rules, and other names resolve to what the table below says. Literal IP hosts
 * and `localhost` never reach the policy's exception: they are judged as they are.
 */

import type { LookupAddress } from "node:dns";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import {
  createGuardedAgent,
  type DestinationPolicy,
  DestinationRefused,
  MAX_REDIRECTS,
  outboundFetch,
  setDestinationPolicy,
  systemPolicy,
} from "@/net/outbound";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { useWorker } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { websiteMetaTableBody } from "../helpers/store-tables";
import { workflowTable } from "../helpers/tables";

const TRUSTED = new Set(["api.public.test", "cdn.public.test"]);
const ANSWERS = new Map<string, LookupAddress[]>([
  ["api.public.test", [{ address: "127.0.0.1", family: 4 }]],
  ["cdn.public.test", [{ address: "127.0.0.1", family: 4 }]],
  ["inward.public.test", [{ address: "10.0.0.5", family: 4 }]],
  [
    "mixed.public.test",
    [
      { address: "93.184.215.14", family: 4 },
      { address: "127.0.0.1", family: 4 },
    ],
  ],
  ["v6.public.test", [{ address: "::1", family: 6 }]],
  ["mapped.public.test", [{ address: "::ffff:127.0.0.1", family: 6 }]],
  ["metadata.public.test", [{ address: "169.254.169.254", family: 4 }]],
]);
const HINT = "set CELLFLOW_ALLOW_PRIVATE_NETWORK=1 to allow";

/** Names looked up and literal addresses judged, in order: how often a destination was tried. */
const lookups: string[] = [];
const judged: string[] = [];
const testPolicy: DestinationPolicy = {
  async resolve(name) {
    lookups.push(name);
    const answer = ANSWERS.get(name);
    if (!answer)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
    return answer;
  },
  refuses(address, host) {
    if (address === host) judged.push(address);
    return TRUSTED.has(host) ? null : systemPolicy.refuses(address, host);
  },
};

interface Hit {
  path: string;
  search: string;
  method: string;
  host: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let server: http.Server;
let port = 0;
const hits: Hit[] = [];
const hitsOf = (path: string) => hits.filter((h) => h.path === path);
let key = "";
let savedFlag: string | undefined;

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function handle(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
  const u = new URL(req.url ?? "/", "http://x");
  hits.push({
    path: u.pathname,
    search: u.search,
    method: req.method ?? "",
    host: req.headers.host ?? "",
    headers: req.headers,
    body,
  });
  const n = Number(u.searchParams.get("n"));
  if (u.pathname === "/go") {
    res.writeHead(Number(u.searchParams.get("status") ?? "302"), {
      location: u.searchParams.get("to") ?? "/",
    });
    res.end();
  } else if (u.pathname === "/hop" && n > 0) {
    res.writeHead(302, { location: `/hop?n=${n - 1}` });
    res.end();
  } else if (u.pathname === "/hop") json(res, 200, { arrived: true });
  else if (u.pathname === "/echo")
    json(res, 200, { method: req.method, body, headers: req.headers });
  else if (u.pathname === "/busy") json(res, 503, { busy: true });
  else json(res, 200, { ok: true });
}

beforeAll(async () => {
  savedFlag = process.env.CELLFLOW_ALLOW_PRIVATE_NETWORK;
  process.env.CELLFLOW_ALLOW_PRIVATE_NETWORK = "0";
  await setDestinationPolicy(testPolicy);
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => handle(req, res, body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as AddressInfo).port;
  const { url } = await useTestDatabase();
  await useWorker(url, 4);
  key = (await newWorkspace()).key;
  const secret = await apiClient(key).PUT("/api/secrets/{name}", {
    params: { path: { name: "LLM_API_KEY" } },
    body: { value: "sk-test" },
  });
  expect(secret.response.status).toBe(200);
});

afterAll(async () => {
  process.env.CELLFLOW_ALLOW_PRIVATE_NETWORK = savedFlag;
  await setDestinationPolicy();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

beforeEach(() => {
  lookups.length = 0;
  judged.length = 0;
  hits.length = 0;
});

type CellRecord = { status: string; error: string | null; attempt: number };

/** One table, one group running `blocks`, one row with `url`; returns the settled cell. */
async function runCell(url: string, blocks: Schemas["Block"][]): Promise<CellRecord> {
  const { tableId } = await workflowTable(key, {
    workflow: { inputs: [], blocks },
    outputs: { out: "call" },
    columns: [{ id: "url", name: "url", type: "text" }],
    group: { version: "live" },
    rows: [],
  });
  return runRow(tableId, url);
}

async function runRow(tableId: string, url: string): Promise<CellRecord> {
  const rows = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: { rows: [{ data: { url } }] },
  });
  const rowId = dataOf(rows).rows[0]?.id as string;
  const run = await apiClient(key).POST("/api/tables/{id}/runs", {
    params: { path: { id: tableId } },
    body: { mode: "all" },
  });
  expect(run.response.status).toBe(202);
  let cell: CellRecord | undefined;
  const settled = await waitFor(async () => {
    [cell] = await queryRows<CellRecord>(
      getDatabase().db,
      sql`select status, error, attempt from cells where row_id = ${rowId} and group_id = 'g'`,
    );
    return ["completed", "error", "cancelled"].includes(cell?.status ?? "");
  }, 60_000);
  if (!settled || !cell) throw new Error(`cell never settled: ${JSON.stringify(cell)}`);
  return cell;
}

/** An http block that would try 3 times if its failure were retryable. */
const httpBlock: Schemas["Block"][] = [
  {
    id: "call",
    type: "http",
    method: "GET",
    url: "{{ row.url }}",
    retry: { attempts: 3, backoffMs: 10 },
  },
];

describe("with the guard on, a cell that calls inward fails once, with a plain message", () => {
  const cases: [string, () => string, string, () => number][] = [
    [
      "a loopback IP",
      () => `http://127.0.0.1:${port}/ok`,
      `refused: 127.0.0.1 is a private address (loopback); ${HINT}`,
      () => judged.filter((a) => a === "127.0.0.1").length,
    ],
    [
      "localhost",
      () => `http://localhost:${port}/ok`,
      `refused: localhost is this machine (localhost); ${HINT}`,
      () => lookups.length + 1,
    ],
    [
      "a public-looking name whose DNS answer is private",
      () => `http://inward.public.test:${port}/ok`,
      `refused: inward.public.test resolves to a private address (10.0.0.5); ${HINT}`,
      () => lookups.filter((n) => n === "inward.public.test").length,
    ],
    [
      "a name with one public and one loopback answer",
      () => `http://mixed.public.test:${port}/ok`,
      `refused: mixed.public.test resolves to a private address (127.0.0.1); ${HINT}`,
      () => lookups.filter((n) => n === "mixed.public.test").length,
    ],
    [
      "IPv6 loopback",
      () => `http://[::1]:${port}/ok`,
      `refused: ::1 is a private address (loopback); ${HINT}`,
      () => judged.filter((a) => a === "::1").length,
    ],
    [
      "IPv4-mapped IPv6 loopback",
      () => `http://[::ffff:127.0.0.1]:${port}/ok`,
      `refused: ::ffff:7f00:1 is a private address (loopback, IPv4-mapped); ${HINT}`,
      () => judged.filter((a) => a === "::ffff:7f00:1").length,
    ],
    [
      "a name answering IPv4-mapped loopback",
      () => `http://mapped.public.test:${port}/ok`,
      `refused: mapped.public.test resolves to a private address (::ffff:127.0.0.1); ${HINT}`,
      () => lookups.filter((n) => n === "mapped.public.test").length,
    ],
    [
      "the cloud metadata address",
      () => "http://169.254.169.254/latest/meta-data/",
      `refused: 169.254.169.254 is a private address (link-local, cloud metadata); ${HINT}`,
      () => judged.filter((a) => a === "169.254.169.254").length,
    ],
    [
      "0.0.0.0",
      () => `http://0.0.0.0:${port}/ok`,
      `refused: 0.0.0.0 is a private address (this network); ${HINT}`,
      () => judged.filter((a) => a === "0.0.0.0").length,
    ],
  ];

  it.each(cases)("%s", async (_what, url, message, tries) => {
    const cell = await runCell(url(), httpBlock);
    expect(cell.status).toBe("error");
    expect(cell.error).toContain(message);
    expect(cell.attempt).toBe(1);
    expect(tries()).toBe(1);
    expect(hits).toHaveLength(0);
  });

  it("a redirect from an allowed server to 127.0.0.1 is refused, and the first hop is not retried", async () => {
    const inward = `http://127.0.0.1:${port}/secret`;
    const cell = await runCell(
      `http://api.public.test:${port}/go?to=${encodeURIComponent(inward)}`,
      httpBlock,
    );
    expect(cell.status).toBe("error");
    expect(cell.error).toContain(`refused: 127.0.0.1 is a private address (loopback); ${HINT}`);
    expect(hitsOf("/go")).toHaveLength(1);
    expect(hitsOf("/secret")).toHaveLength(0);
  });

  it("a redirect to a name that resolves to the metadata address is refused at connect", async () => {
    const inward = `http://metadata.public.test:${port}/secret`;
    const cell = await runCell(
      `http://api.public.test:${port}/go?to=${encodeURIComponent(inward)}`,
      httpBlock,
    );
    expect(cell.error).toContain(
      `refused: metadata.public.test resolves to a private address (169.254.169.254); ${HINT}`,
    );
    expect(hitsOf("/go")).toHaveLength(1);
    expect(hitsOf("/secret")).toHaveLength(0);
  });

  it("the control: a retryable failure in the same block is tried 3 times", async () => {
    const cell = await runCell(`http://api.public.test:${port}/busy`, httpBlock);
    expect(cell.status).toBe("error");
    expect(hitsOf("/busy")).toHaveLength(3);
  });

  it("an llm block whose endpoint is loopback is refused, not retried", async () => {
    const cell = await runCell("", [
      {
        id: "call",
        type: "llm",
        model: "m",
        prompt: "hi",
        baseUrl: `http://127.0.0.1:${port}/v1`,
        retry: { attempts: 3, backoffMs: 10 },
      },
    ]);
    expect(cell.status).toBe("error");
    expect(cell.error).toContain(`refused: 127.0.0.1 is a private address (loopback); ${HINT}`);
    expect(judged.filter((a) => a === "127.0.0.1")).toHaveLength(1);
    expect(hits).toHaveLength(0);
  });

  it("an enrichment provider (website_meta) pointed at the metadata address is refused", async () => {
    const t = await apiClient(key).POST("/api/tables", {
      // Group `g`: the one runRow reads.
      body: websiteMetaTableBody("ssrf-enrich", { id: "g" }),
    });
    expect(t.response.status).toBe(201);
    const cell = await runRow(dataOf(t).id, "http://169.254.169.254/latest/meta-data/");
    expect(cell.status).toBe("error");
    expect(cell.error).toContain(
      `refused: 169.254.169.254 is a private address (link-local, cloud metadata); ${HINT}`,
    );
    expect(cell.attempt).toBe(1);
  });
});

describe("the outbound door itself, guard on", () => {
  it("a name is resolved once, by the connection itself, so the address judged is the one used", async () => {
    // A fresh pool: a kept-alive connection from an earlier test would need no lookup.
    await setDestinationPolicy(testPolicy);
    const res = await outboundFetch(`http://api.public.test:${port}/ok`);
    expect(res.status).toBe(200);
    expect(lookups).toEqual(["api.public.test"]);
    expect(hitsOf("/ok")).toHaveLength(1);
  });

  it("a refusal is a DestinationRefused, not a network failure", async () => {
    const err = await outboundFetch(`http://inward.public.test:${port}/ok`).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DestinationRefused);
    expect((err as DestinationRefused).retryable).toBe(false);
  });

  it("the agent refuses a literal private address at connect, even without the door's URL check", async () => {
    const agent = createGuardedAgent(systemPolicy);
    try {
      const err = await undiciFetch(`http://127.0.0.1:${port}/ok`, { dispatcher: agent }).catch(
        (e: unknown) => e,
      );
      expect((err as Error).cause).toBeInstanceOf(DestinationRefused);
      expect(hits).toHaveLength(0);
    } finally {
      await agent.close();
    }
  });

  it("an IPv6 loopback answer is refused at connect", async () => {
    const err = await outboundFetch(`http://v6.public.test:${port}/ok`).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      `refused: v6.public.test resolves to a private address (::1); ${HINT}`,
    );
  });

  it("only http and https are fetched, on the first hop and after a redirect", async () => {
    await expect(outboundFetch("file:///etc/passwd")).rejects.toThrow(
      "refused: file: URLs are not fetched, only http and https",
    );
    await expect(
      outboundFetch(`http://api.public.test:${port}/go?to=${encodeURIComponent("ftp://x/y")}`),
    ).rejects.toThrow("refused: ftp: URLs are not fetched, only http and https");
  });

  it(`follows ${MAX_REDIRECTS} redirects and refuses the next`, async () => {
    const ok = await outboundFetch(`http://api.public.test:${port}/hop?n=${MAX_REDIRECTS}`);
    expect(await ok.json()).toEqual({ arrived: true });
    expect(ok.url).toBe(`http://api.public.test:${port}/hop?n=0`);
    await expect(
      outboundFetch(`http://api.public.test:${port}/hop?n=${MAX_REDIRECTS + 1}`),
    ).rejects.toThrow(`refused: more than ${MAX_REDIRECTS} redirects`);
  });

  it("303 turns a POST into a GET without its body; 307 keeps both", async () => {
    const post = (status: number) =>
      outboundFetch(
        `http://api.public.test:${port}/go?status=${status}&to=${encodeURIComponent("/echo")}`,
        { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' },
      );
    const seeOther = (await (await post(303)).json()) as {
      method: string;
      body: string;
      headers: Record<string, string>;
    };
    expect(seeOther).toMatchObject({ method: "GET", body: "" });
    expect(seeOther.headers["content-type"]).toBeUndefined();
    const temporary = (await (await post(307)).json()) as { method: string; body: string };
    expect(temporary).toMatchObject({ method: "POST", body: '{"a":1}' });
  });

  it("credentials go to the origin that was asked, never to another one a redirect names", async () => {
    const headers = { authorization: "Bearer sk-secret", cookie: "s=1", "x-trace": "t" };
    const same = await outboundFetch(
      `http://api.public.test:${port}/go?to=${encodeURIComponent("/echo")}`,
      { headers },
    );
    const sameSeen = ((await same.json()) as { headers: Record<string, string> }).headers;
    expect(sameSeen.authorization).toBe("Bearer sk-secret");
    const other = `http://cdn.public.test:${port}/echo`;
    const cross = await outboundFetch(
      `http://api.public.test:${port}/go?to=${encodeURIComponent(other)}`,
      { headers },
    );
    const crossSeen = ((await cross.json()) as { headers: Record<string, string> }).headers;
    expect(crossSeen.host).toBe(`cdn.public.test:${port}`);
    expect(crossSeen.authorization).toBeUndefined();
    expect(crossSeen.cookie).toBeUndefined();
    expect(crossSeen["x-trace"]).toBe("t");
  });
});

describe("with CELLFLOW_ALLOW_PRIVATE_NETWORK=1", () => {
  it("loopback is allowed, directly and after a redirect", async () => {
    process.env.CELLFLOW_ALLOW_PRIVATE_NETWORK = "1";
    try {
      const cell = await runCell(`http://127.0.0.1:${port}/ok`, httpBlock);
      expect(cell.status).toBe("completed");
      const inward = `http://localhost:${port}/echo`;
      const res = await outboundFetch(
        `http://127.0.0.1:${port}/go?to=${encodeURIComponent(inward)}`,
      );
      expect(res.status).toBe(200);
      expect(hitsOf("/echo")).toHaveLength(1);
    } finally {
      process.env.CELLFLOW_ALLOW_PRIVATE_NETWORK = "0";
    }
  });
});

/**
 * A workspace secret never leaves a run: not in cell outputs, cell errors, API responses,
 * the event stream, any table of the database (but the sealed secrets table) or the
 * logs, neither as it is nor URL-encoded (once or twice), JSON-escaped (once or twice),
 * in a Basic credential (base64) nor cut in half by an error excerpt. The workflows send
 * the secret to a loopback server that echoes it back every way it can: in the body, in
 * headers, in an error body (where the excerpt cut falls inside the secret, and where the
 * read limit does), through a redirect's Location, in an LLM provider's refusal of the
 * key; a real worker runs them. Last, a runaway expression fails its cell plainly.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { setLogDestination } from "@/config/log";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { useWorker } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { call } from "../helpers/raw-api";
import { openEvents } from "../helpers/sse";
import { workflowTable } from "../helpers/tables";

// Random hex first, so any 8 characters of its start are found only where it leaked;
// then characters that URL-encoding and JSON-escaping both change.
const SECRET = `${randomBytes(12).toString("hex")}"q\\ p@ss/+=~`;
const PREFIX_CHARS = 8;

/** The secret in every form an echo brings it back in, and every start of it of 8+ chars. */
function leakForms(): string[] {
  const once = JSON.stringify(SECRET).slice(1, -1);
  const forms = [
    SECRET,
    encodeURIComponent(SECRET),
    encodeURIComponent(encodeURIComponent(SECRET)),
    encodeURI(SECRET),
    once,
    JSON.stringify(once).slice(1, -1),
    Buffer.from(`user:${SECRET}`).toString("base64"),
  ];
  for (let n = PREFIX_CHARS; n < SECRET.length; n++) forms.push(SECRET.slice(0, n));
  return forms;
}

function leaksIn(where: string, text: string): string[] {
  return leakForms()
    .filter((form) => text.includes(form))
    .map((form) => `${where}: ${form}`);
}

const logLines: string[] = [];
let server: http.Server;
let base: string;
let key: string;
let tableId: string;
let rowId: string;
const db = () => getDatabase().db;

/**
 * Echoes what it was sent, and the secret in many forms, on every path. (It knows the
 * secret beforehand; every workflow sends it too, as a run loads secrets only for a
 * workflow that uses them.)
 */
function echoServer(): http.Server {
  return http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (path === "/redirect") {
        res.writeHead(302, {
          location: `/echo?from=redirect&t=${encodeURIComponent(SECRET)}`,
        });
        res.end();
      } else if (path === "/v1/chat/completions") {
        // As a real provider does: a refused key is quoted back in the error; the cut of
        // the 300-character excerpt falls inside it.
        res.writeHead(401, { "content-type": "application/json" });
        const auth = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
        res.end(
          JSON.stringify({
            error: {
              message: `${"w".repeat(250)} Incorrect API key provided: ${auth}`,
              type: "invalid_request_error",
              code: "invalid_api_key",
            },
          }),
        );
      } else if (path === "/fail-cut") {
        // The excerpt is 300 characters: the cut falls 11 characters into the secret.
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(`${"x".repeat(288)} ${SECRET} after`);
      } else if (path === "/fail-truncated") {
        // Only 4 KiB of an error body is read: the read stops 9 characters into the secret,
        // and the whitespace flattens to an excerpt short enough to show all of it.
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(`z${" ".repeat(4086)}${SECRET} after`);
      } else {
        res.writeHead(200, {
          "content-type": "application/json",
          "x-echo-token": SECRET,
          "x-echo-url": encodeURIComponent(SECRET),
        });
        res.end(
          JSON.stringify({
            url: req.url,
            headers: req.headers,
            body,
            twice: JSON.stringify(JSON.stringify({ t: SECRET })),
            encodedTwice: encodeURIComponent(encodeURIComponent(SECRET)),
          }),
        );
      }
    });
  });
}

async function workflow(name: string, blocks: Schemas["Block"][]): Promise<string> {
  const r = await apiClient(key).POST("/api/workflows", {
    body: { name, definition: { inputs: [], blocks } },
  });
  if (r.response.status !== 201)
    throw new Error(`workflow refused: ${JSON.stringify(r.error ?? r.data)}`);
  return dataOf(r).id;
}

type Cell = { status: string; error?: string | null; blockErrors?: Record<string, string> };
type Row = { id: string; data: Record<string, unknown>; cells: Record<string, Cell> };

const GROUPS = ["echo", "nested", "cut", "truncated", "fail", "items", "llm"] as const;
let streamText = "";
let settled: Row;

beforeAll(async () => {
  // Before the worker starts: it takes its logger when it starts.
  setLogDestination(
    {
      write: (line: string) => {
        logLines.push(line);
      },
    },
    "trace",
  );
  const { url } = await useTestDatabase();
  await useWorker(url, 4);
  server = echoServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  key = (await newWorkspace("leaks")).key;
  const put = await apiClient(key).PUT("/api/secrets/{name}", {
    params: { path: { name: "API_TOKEN" } },
    body: { value: SECRET },
  });
  expect(put.response.status).toBe(200);
  const llmKey = await apiClient(key).PUT("/api/secrets/{name}", {
    params: { path: { name: "LLM_API_KEY" } },
    body: { value: SECRET },
  });
  expect(llmKey.response.status).toBe(200);

  const echo = await workflow("echo", [
    {
      id: "call",
      type: "http",
      method: "POST",
      url: `${base}/echo?t={{ $encodeUrlComponent(secrets.API_TOKEN) }}`,
      headers: {
        Authorization: "Bearer {{ secrets.API_TOKEN }}",
        "X-Basic": "Basic {{ $base64encode('user:' & secrets.API_TOKEN) }}",
      },
      body: { token: "{{ secrets.API_TOKEN }}", nested: ["{{ secrets.API_TOKEN }}"] },
      next: "redir",
    },
    { id: "redir", type: "http", method: "GET", url: `${base}/redirect`, next: "show" },
    {
      id: "show",
      type: "transform",
      expression: `{
        "raw": secrets.API_TOKEN,
        "call": blocks.call,
        "redir": blocks.redir,
        "json": $string({"t": secrets.API_TOKEN}),
        "json2": $string($string({"t": secrets.API_TOKEN})),
        "url": $encodeUrlComponent(secrets.API_TOKEN),
        "url2": $encodeUrlComponent($encodeUrlComponent(secrets.API_TOKEN)),
        "basic": $base64encode("user:" & secrets.API_TOKEN)
      }`,
    },
  ]);
  const cut = await workflow("cut", [
    {
      id: "call",
      type: "http",
      method: "GET",
      url: `${base}/fail-cut`,
      headers: { Authorization: "Bearer {{ secrets.API_TOKEN }}" },
    },
  ]);
  const truncated = await workflow("truncated", [
    {
      id: "call",
      type: "http",
      method: "GET",
      url: `${base}/fail-truncated`,
      headers: { Authorization: "Bearer {{ secrets.API_TOKEN }}" },
    },
  ]);
  const fail = await workflow("fail", [
    {
      id: "stop",
      type: "fail",
      message:
        "refused {{ secrets.API_TOKEN }} {{ $encodeUrlComponent(secrets.API_TOKEN) }} {{ $string({'t': secrets.API_TOKEN}) }}",
    },
  ]);
  // The error quotes the first 100 characters of the items: the cut falls in the secret.
  const items = await workflow("items", [
    {
      id: "each",
      type: "foreach",
      items: `$pad("", 90, "y") & secrets.API_TOKEN`,
      workflowId: fail,
    },
  ]);
  const llm = await workflow("llm", [
    {
      id: "ask",
      type: "llm",
      baseUrl: `${base}/v1`,
      model: "test-model",
      prompt: "say hi",
    },
  ]);
  // The echo again, inside a foreach item: its blocks and the item are step records.
  const nested = await workflow("nested", [
    { id: "each", type: "foreach", items: "[1]", workflowId: echo },
  ]);
  const ids = { echo, nested, cut, truncated, fail, items, llm };
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "leaks",
      columns: GROUPS.map((g) => ({ id: `out_${g}`, name: `out_${g}`, type: "json" as const })),
      groups: GROUPS.map((g) => ({
        id: g,
        name: g,
        kind: "workflow" as const,
        workflowId: ids[g],
        outputs: [
          {
            columnId: `out_${g}`,
            from:
              { echo: "show", nested: "each", items: "each", llm: "ask" }[g as string] ?? "call",
          },
        ],
      })),
    },
  });
  expect(t.response.status).toBe(201);
  tableId = dataOf(t).id;
  const rows = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: { rows: [{ data: {} }] },
  });
  rowId = dataOf(rows).rows[0]?.id as string;

  const stream = await openEvents(key, tableId);
  expect(stream.status).toBe(200);
  const run = await apiClient(key).POST("/api/tables/{id}/runs", {
    params: { path: { id: tableId } },
    body: { mode: "all" },
  });
  expect(run.response.status).toBe(202);
  const done = await waitFor(async () => {
    settled = dataOf(
      await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
        params: { path: { id: tableId, rowId } },
      }),
    );
    return GROUPS.every((g) => ["completed", "error"].includes(settled.cells[g]?.status ?? ""));
  }, 60_000);
  if (!done) throw new Error(`cells never settled: ${JSON.stringify(settled)}`);
  // Terminal events come from the same writes: wait for all of them.
  await stream.waitFor((events) =>
    GROUPS.every((g) =>
      events.some(
        (e) =>
          e.event === "cell" &&
          e.data.groupId === g &&
          ["completed", "error"].includes(String(e.data.status)),
      ),
    ),
  );
  streamText = JSON.stringify(stream.events);
  await stream.close();
}, 120_000);

afterAll(async () => {
  setLogDestination(process.stdout);
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe("a secret echoed back by a server leaves the run nowhere", () => {
  it("the runs did what they were meant to: the echo completed, the failures failed", () => {
    expect(settled.cells.echo?.status).toBe("completed");
    const out = settled.data.out_echo as Record<string, unknown>;
    // The secret was really sent and echoed (now redacted), so its absence means something.
    expect(JSON.stringify(out)).toContain("[redacted]");
    expect(out.raw).toBe("[redacted]");
    expect(settled.cells.nested?.status).toBe("completed");
    expect(JSON.stringify(settled.data.out_nested)).toContain("[redacted]");
    for (const g of ["cut", "truncated", "fail", "items", "llm"] as const) {
      expect({ g, status: settled.cells[g]?.status }).toEqual({ g, status: "error" });
    }
    expect(settled.cells.cut?.error).toContain("HTTP 500 from");
    expect(settled.cells.cut?.error).toContain("x".repeat(50));
    expect(settled.cells.truncated?.error).toContain("HTTP 500 from");
    expect(settled.cells.fail?.error).toContain("refused [redacted]");
    expect(settled.cells.items?.error).toContain("items must be an array");
    expect(settled.cells.llm?.error).toContain("Incorrect API key provided");
  });

  it("no API response for the table, its rows, cells, runs or export holds it", async () => {
    const paths = [
      `/api/tables/${tableId}`,
      `/api/tables/${tableId}/rows`,
      `/api/tables/${tableId}/rows/${rowId}`,
      `/api/tables/${tableId}/runs`,
      `/api/tables/${tableId}/export`,
      "/api/secrets",
      "/api/workflows",
    ];
    const leaks: string[] = [];
    for (const path of paths) {
      const res = await call("GET", path, { key });
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      const text = typeof res.body === "string" ? res.body : JSON.stringify(res.body);
      leaks.push(...leaksIn(path, text));
    }
    expect(leaks).toEqual([]);
  });

  it("the event stream never carries it", () => {
    expect(streamText).toContain('"groupId":"echo"');
    expect(leaksIn("events", streamText)).toEqual([]);
  });

  it("no table of the database holds it, but the sealed secrets table; nor any job payload", async () => {
    const tables = await queryRows<{ schema: string; name: string }>(
      db(),
      sql`select table_schema as schema, table_name as name from information_schema.tables
          where table_schema in ('public', 'graphile_worker') and table_type = 'BASE TABLE'`,
    );
    const names = tables.map((t) => `${t.schema}.${t.name}`);
    expect(names).toContain("public.cells");
    expect(names).toContain("public.secrets");
    const leaks: string[] = [];
    for (const t of tables) {
      if (t.schema === "public" && t.name === "secrets") continue;
      const rows = await queryRows<{ text: string }>(
        db(),
        sql`select t::text as text from ${sql.identifier(t.schema)}.${sql.identifier(t.name)} t`,
      );
      leaks.push(...leaksIn(`${t.schema}.${t.name}`, rows.map((r) => r.text).join("\n")));
    }
    expect(leaks).toEqual([]);
    // Still sealed where it is stored.
    const sealed = await queryRows<{ text: string }>(
      db(),
      sql`select t::text as text from secrets t`,
    );
    expect(leaksIn("secrets", sealed.map((r) => r.text).join("\n"))).toEqual([]);
  });

  it("the logs never carry it", () => {
    expect(logLines.length).toBeGreaterThan(0);
    expect(leaksIn("log", logLines.join(""))).toEqual([]);
  });
});

describe("a runaway expression fails its cell with a plain message", () => {
  it("endless recursion in a transform is stopped by the time limit and the cell says so", async () => {
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: {
        inputs: [],
        blocks: [
          {
            id: "loop",
            type: "transform",
            expression: "($f := function($n){ $f($n + 1) }; $f(0))",
          },
        ],
      },
      outputs: { out: "loop" },
    });
    const id = rowIds[0] as string;
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all" },
    });
    let row: Row | undefined;
    const done = await waitFor(async () => {
      row = dataOf(
        await apiClient(key).GET("/api/tables/{id}/rows/{rowId}", {
          params: { path: { id: tableId, rowId: id } },
        }),
      );
      return ["completed", "error"].includes(row.cells.g?.status ?? "");
    }, 60_000);
    expect(done).toBe(true);
    expect(row?.cells.g?.status).toBe("error");
    expect(row?.cells.g?.error).toBe(
      'Block "loop" failed: the expression was stopped: it ran longer than 1000 ms',
    );
    expect(row?.cells.g?.blockErrors).toEqual({
      loop: "the expression was stopped: it ran longer than 1000 ms",
    });
  });
});

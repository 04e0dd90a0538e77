/**
 * Hostile text through every string the API accepts. Each one either comes back exactly
 * as sent (read through the API) or is refused with 400 in the API error shape, writing
 * nothing — never a 500, never a silently altered value. The expectations are precise:
 * a string the contract allows must be accepted, one it forbids must be refused.
 */
import { createHmac } from "node:crypto";
import { sql } from "drizzle-orm";
import jsonata from "jsonata";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client";
import { getDatabase } from "../../db/instance";
import { closeBackend } from "../../src/backends/instance";
import { ApiError } from "../../src/contracts/common";
import { csvField, csvRecords } from "../../src/domain/csv";
import { decodeSecretKey, openSecret } from "../../src/security/secret-box";
import { type ApiResponse, type CallOptions, call } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { dbFingerprint } from "../helpers/fingerprint";
import { newWorkspace } from "../helpers/fixtures";

const MIB = 1024 * 1024;
const ADMIN_TOKEN = "hostile-input-admin-token";

/** About fifty strings that have broken parsers, queries, encoders and spreadsheets. */
const HOSTILE: Record<string, string> = {
  "SQL injection": "'; drop table rows; --",
  "SQL double quote": '"; drop table tables; --',
  "SQL comment": "/* */ or 1=1 --",
  "LIKE percent": "%",
  "LIKE underscore": "_",
  "LIKE both": "%_%\\%\\_",
  backslash: "\\",
  "escaped-looking text": "\\u0000 \\n \\x00",
  "positional parameter": "$1",
  "dollar quoting": "$$; select pg_sleep(1); $$",
  "tagged dollar quoting": "$tag$x$tag$",
  "NUL inside": "a\u0000b",
  "NUL alone": "\u0000",
  "lone high surrogate": "\ud800",
  "lone low surrogate": "x\udc00y",
  "reversed surrogate pair": "\udc00\ud800",
  "right-to-left override": "\u202Egnp.exe\u202C",
  Arabic: "مرحبا بالعالم",
  Hebrew: "שלום",
  "zero-width characters": "a\u200Bb\u200Cc\u200Dd\u2060e",
  "byte order mark inside": "a\uFEFFb",
  "byte order mark first": "\uFEFFstart",
  "combining marks": "e\u0301\u0301\u0301\u0301",
  "decomposed é (NFD)": "cafe\u0301",
  "composed é (NFC)": "caf\u00e9",
  emoji: "😀",
  "emoji ZWJ family": "👨‍👩‍👧‍👦",
  "flag emoji": "🇫🇷",
  "astral letters": "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
  "private use": "\uE000\uF8FF",
  noncharacters: "\uFFFE\uFFFF",
  "replacement character": "\uFFFD",
  "line feed": "a\nb",
  CRLF: "a\r\nb",
  "carriage return": "a\rb",
  "control characters": "\u0001\u0007\u001b[31mred",
  "DEL and C1 controls": "\u007f\u0085\u009b",
  "line and paragraph separators": "a\u2028b\u2029c",
  "surrounding spaces": "  padded  ",
  "non-breaking space only": "\u00a0",
  "spaces only": "   ",
  empty: "",
  HTML: "<script>alert(1)</script>",
  "JSON-looking text": '{"__proto__":{"admin":true}}',
  "CSV-looking text": '"a","b"\r\n=1',
  template: "{{ secrets.LLM_API_KEY }}",
  // Computed: a literal `__proto__:` key would set the object's prototype instead.
  ["__proto__"]: "__proto__",
  constructor: "constructor",
  "formula =": '=HYPERLINK("http://x.test","y")',
  "formula @": "@SUM(A1:A9)",
  "10,000 characters": "x".repeat(10_000),
  "100,000 characters (the text limit)": "y".repeat(100_000),
  "100,001 characters": "z".repeat(100_001),
  "1,000,000 characters (under the body limit)": "v".repeat(1_000_000),
  "1 MiB (over the body limit)": "w".repeat(MIB),
};

const entries = Object.entries(HOSTILE);
if (entries.length !== 55 || !Object.hasOwn(HOSTILE, "__proto__"))
  throw new Error("the hostile strings were not all listed");

/** A URL cannot carry an unpaired surrogate: the client sends U+FFFD for it. */
const inUrl = (s: string) => encodeURIComponent(s.toWellFormed());
const storable = (s: string) => !s.includes("\u0000") && s.isWellFormed();
const bytes = (s: string) => Buffer.byteLength(s, "utf8");
/** What `Name` accepts: kept exactly, so no white space at either end. */
const nameOk = (s: string) =>
  storable(s) && s.length >= 1 && s.length <= 200 && s.trim() === s && s !== "";
const textOk = (s: string) => storable(s) && s.length <= 100_000;
const clientIdOk = (s: string) => /^[a-z][a-z0-9_]{0,62}$/.test(s) && s !== "constructor";
/** Expressions are checked for JSONata syntax when a workflow is saved. */
const parses = (s: string) => {
  try {
    jsonata(s);
    return true;
  } catch {
    return false;
  }
};

let key: string;
let workflowId: string;
let baseTable: string;

beforeAll(async () => {
  await useTestDatabase();
  process.env.CELLFLOW_ADMIN_TOKEN = ADMIN_TOKEN;
  key = (await newWorkspace("hostile")).key;
  const wf = await call<{ id: string }>("POST", "/api/workflows", {
    key,
    body: {
      name: "w",
      definition: { blocks: [{ id: "done", type: "transform", expression: "'ok'" }] },
    },
  });
  workflowId = wf.body.id;
  const t = await call<{ id: string }>("POST", "/api/tables", {
    key,
    body: {
      name: "base",
      columns: [
        { id: "t", name: "T", type: "text" },
        { id: "j", name: "J", type: "json" },
      ],
    },
  });
  baseTable = t.body.id;
});

afterAll(async () => {
  delete process.env.CELLFLOW_ADMIN_TOKEN;
  await closeBackend();
});

/**
 * A request expected to be accepted (then `readBack` must give exactly `sent`) or refused
 * (400 in the error shape, or 413 for a body over the limit) with nothing written.
 * `refusals` are the statuses a refusal may have; `[413]` says the body is over the limit.
 */
async function accepts(
  label: string,
  accept: boolean,
  send: () => Promise<ApiResponse>,
  readBack: (res: ApiResponse) => Promise<unknown>,
  sent: unknown,
  refusals: number[] = [400],
): Promise<void> {
  // A body over the limit is refused whatever it holds.
  const acceptable = accept && !refusals.includes(413);
  const before = await dbFingerprint();
  const res = await send();
  const brief = JSON.stringify(res.body).slice(0, 300);
  expect(res.status, `${label}: never a 500 (${brief})`).toBeLessThan(500);
  if (acceptable) {
    expect(res.status, `${label} should be accepted: ${brief}`).toBeLessThan(300);
    const back = await readBack(res);
    // Exact: Object.is on strings, deep equality with own keys for objects.
    expect(back, `${label} came back altered`).toStrictEqual(sent);
    return;
  }
  expect(refusals, `${label} should be refused: got ${res.status} ${brief}`).toContain(res.status);
  const error = ApiError.parse(res.body).error;
  if (res.status === 400) expect(error.issues?.length, label).toBeGreaterThan(0);
  expect(await dbFingerprint(), `${label} wrote something`).toBe(before);
}

/** JSON bodies over 1 MiB are a 413, whatever they hold. */
const overLimit = (body: unknown) => bytes(JSON.stringify(body)) > MIB;

function post(method: string, path: string, body: unknown, extra: CallOptions = {}) {
  return () => call(method, path, { key, body, ...extra });
}

async function get<T>(path: string): Promise<T> {
  const res = await call<T>("GET", path, { key });
  expect(res.status, path).toBe(200);
  return res.body;
}

type TableView = {
  id: string;
  name: string;
  columns: { id: string; name: string; options?: string[] }[];
  groups: { id: string; name: string }[];
};
type RowView = { id: string; data: Record<string, unknown> };
type WorkflowView = { definition: { blocks: Record<string, unknown>[] }; name: string };

const createdId = (res: ApiResponse) => (res.body as { id: string }).id;
const tableOf = (res: ApiResponse) => get<TableView>(`/api/tables/${createdId(res)}`);
const firstRow = async (res: ApiResponse) => {
  const id = (res.body as { rows: { id: string }[] }).rows[0]?.id;
  return (await get<RowView>(`/api/tables/${baseTable}/rows/${id}`)).data;
};

describe("names and ids: kept exactly as sent, or refused with 400", () => {
  it("table names (create and rename)", async () => {
    for (const [label, s] of entries) {
      const body = { name: s };
      await accepts(
        `create ${label}`,
        nameOk(s),
        post("POST", "/api/tables", body),
        async (res) => (await tableOf(res)).name,
        s,
        overLimit(body) ? [413] : [400],
      );
      await accepts(
        `rename ${label}`,
        nameOk(s),
        post("PATCH", `/api/tables/${baseTable}`, body),
        async () => (await get<TableView>(`/api/tables/${baseTable}`)).name,
        s,
        overLimit(body) ? [413] : [400],
      );
    }
  });

  it("column names, column ids and select options", async () => {
    for (const [label, s] of entries) {
      const limit = (body: unknown) => (overLimit(body) ? [413] : [400]);
      const named = { name: "c", columns: [{ id: "c", name: s, type: "text" }] };
      await accepts(
        `column name ${label}`,
        // A column's name is a key of `row` in expressions: `__proto__` cannot be one.
        nameOk(s) && s !== "__proto__",
        post("POST", "/api/tables", named),
        async (res) => (await tableOf(res)).columns[0]?.name,
        s,
        limit(named),
      );
      const ided = { name: "c", columns: [{ id: s, name: "C", type: "text" }] };
      await accepts(
        `column id ${label}`,
        clientIdOk(s),
        post("POST", "/api/tables", ided),
        async (res) => (await tableOf(res)).columns[0]?.id,
        s,
        limit(ided),
      );
      const option = { name: "c", columns: [{ id: "c", name: "C", type: "select", options: [s] }] };
      await accepts(
        `select option ${label}`,
        storable(s) && s.length >= 1 && s.length <= 200,
        post("POST", "/api/tables", option),
        async (res) => (await tableOf(res)).columns[0]?.options,
        [s],
        limit(option),
      );
    }
  });

  it("group names and group ids", async () => {
    const group = (over: Record<string, unknown>) => ({
      name: "g",
      columns: [{ id: "out", name: "Out", type: "text" }],
      groups: [
        {
          id: "g",
          name: "G",
          kind: "workflow",
          workflowId,
          outputs: [{ columnId: "out", from: "done" }],
          ...over,
        },
      ],
    });
    for (const [label, s] of entries) {
      const named = group({ name: s });
      await accepts(
        `group name ${label}`,
        nameOk(s),
        post("POST", "/api/tables", named),
        async (res) => (await tableOf(res)).groups[0]?.name,
        s,
        overLimit(named) ? [413] : [400],
      );
      const ided = group({ id: s });
      await accepts(
        `group id ${label}`,
        clientIdOk(s),
        post("POST", "/api/tables", ided),
        async (res) => (await tableOf(res)).groups[0]?.id,
        s,
        overLimit(ided) ? [413] : [400],
      );
    }
  });

  it("workflow names, block names, expressions and http block templates", async () => {
    const definition = (block: Record<string, unknown>) => ({ blocks: [block] });
    const create = (name: string, block: Record<string, unknown>) => ({
      name,
      definition: definition(block),
    });
    const blockOf = async (res: ApiResponse) =>
      (await get<WorkflowView>(`/api/workflows/${createdId(res)}`)).definition.blocks[0];
    const transform = { id: "a", type: "transform", expression: "1" };
    for (const [label, s] of entries) {
      const limit = (body: unknown) => (overLimit(body) ? [413] : [400]);
      const named = create(s, transform);
      await accepts(
        `workflow name ${label}`,
        nameOk(s),
        post("POST", "/api/workflows", named),
        async (res) => (await get<WorkflowView>(`/api/workflows/${createdId(res)}`)).name,
        s,
        limit(named),
      );
      const blockName = create("w", { ...transform, name: s });
      await accepts(
        `block name ${label}`,
        storable(s) && s.length <= 200,
        post("POST", "/api/workflows", blockName),
        async (res) => (await blockOf(res))?.name,
        s,
        limit(blockName),
      );
      const expression = create("w", { ...transform, expression: s });
      await accepts(
        `expression ${label}`,
        storable(s) && s.length >= 1 && s.length <= 20_000 && parses(s),
        post("POST", "/api/workflows", expression),
        async (res) => (await blockOf(res))?.expression,
        s,
        limit(expression),
      );
      const http = {
        id: "h",
        type: "http",
        method: "POST",
        url: "https://api.example.test/{{ inputs.x }}",
        headers: { "x-value": s },
        body: { text: s, list: [s, { nested: s }], [s]: 1 },
      };
      const httpBody = create("w", http);
      await accepts(
        `http block ${label}`,
        storable(s) && s.length <= 100_000 && s !== "__proto__",
        post("POST", "/api/workflows", httpBody),
        async (res) => {
          const b = await blockOf(res);
          return { headers: b?.headers, body: b?.body };
        },
        { headers: http.headers, body: http.body },
        limit(httpBody),
      );
    }
  });
});

describe("row values: kept exactly as sent, or refused with 400", () => {
  it("text values, inserted and edited", async () => {
    const row = (
      await call<{ rows: { id: string }[] }>("POST", `/api/tables/${baseTable}/rows`, {
        key,
        body: { rows: [{ data: {} }] },
      })
    ).body.rows[0]?.id;
    for (const [label, s] of entries) {
      const insert = { rows: [{ data: { t: s } }] };
      await accepts(
        `insert ${label}`,
        textOk(s),
        post("POST", `/api/tables/${baseTable}/rows`, insert),
        async (res) => (await firstRow(res)).t,
        s,
        overLimit(insert) ? [413] : [400],
      );
      const patch = { data: { t: s } };
      await accepts(
        `edit ${label}`,
        textOk(s),
        post("PATCH", `/api/tables/${baseTable}/rows/${row}`, patch),
        async () => (await get<RowView>(`/api/tables/${baseTable}/rows/${row}`)).data.t,
        s,
        overLimit(patch) ? [413] : [400],
      );
    }
  });

  it("json values: strings, object keys and arrays", async () => {
    for (const [label, s] of entries) {
      const value = { [s]: s, list: [s, { deeper: [s] }] };
      const insert = { rows: [{ data: { j: value } }] };
      await accepts(
        `json ${label}`,
        storable(s) && s !== "__proto__",
        post("POST", `/api/tables/${baseTable}/rows`, insert),
        async (res) => (await firstRow(res)).j,
        value,
        overLimit(insert) ? [413] : [400],
      );
    }
  });

  it("row data keys that are not column ids are refused", async () => {
    for (const [label, s] of entries) {
      const insert = { rows: [{ data: { [s]: "x" } }] };
      await accepts(
        `data key ${label}`,
        false,
        post("POST", `/api/tables/${baseTable}/rows`, insert),
        async () => null,
        null,
        overLimit(insert) ? [413] : [400],
      );
    }
  });
});

describe("secrets, hooks and other inputs", () => {
  const serverKey = decodeSecretKey(process.env.CELLFLOW_SECRET_KEY ?? "");

  async function storedSecret(name: string): Promise<string | null> {
    const [row] = await queryRows<{ ct: string }>(
      getDatabase().db,
      sql`select ciphertext as ct from secrets where name = ${name}`,
    );
    if (!row || !serverKey) return null;
    const opened = openSecret(serverKey, row.ct);
    return opened.ok ? opened.value : null;
  }

  it("secret values are stored exactly as sent (write-only, so read back from the database)", async () => {
    for (const [label, s] of entries) {
      const body = { value: s };
      await accepts(
        `secret value ${label}`,
        storable(s) && s.length >= 1 && bytes(s) <= 8 * 1024,
        post("PUT", "/api/secrets/HOSTILE", body),
        () => storedSecret("HOSTILE"),
        s,
        overLimit(body) ? [413] : [400],
      );
    }
  });

  it("secret names: only ^[A-Z][A-Z0-9_]{0,63}$, anything else a 400 (or 404 when it cannot be a path id)", async () => {
    for (const [label, s] of entries) {
      await accepts(
        `secret name ${label}`,
        /^[A-Z][A-Z0-9_]{0,63}$/.test(s),
        post("PUT", `/api/secrets/${inUrl(s)}`, { value: "v" }),
        async () => null,
        null,
        [400, 404],
      );
    }
  });

  it("hook actions and other fields no string of this list is valid for are refused", async () => {
    for (const [label, s] of entries) {
      const cases: [string, string, string, unknown][] = [
        ["hook action", "POST", `/api/tables/${baseTable}/hooks`, { action: s }],
        ["run mode", "POST", `/api/tables/${baseTable}/runs`, { mode: s }],
        ["admin name in the wrong place", "POST", "/api/tables", { name: "x", [s]: 1 }],
      ];
      for (const [what, method, path, body] of cases) {
        await accepts(
          `${what} ${label}`,
          false,
          post(method, path, body),
          async () => null,
          null,
          overLimit(body) ? [413] : [400],
        );
      }
    }
  });

  it("id fields and fields that only look things up never fail: group inputs, outputs and dependencies, block ids, run and row ids, cursors, sign-in keys", async () => {
    for (const [label, s] of entries) {
      const probes: [string, string, CallOptions][] = [
        ["POST", `/api/tables/${baseTable}/runs`, { key, body: { mode: "all", groupIds: [s] } }],
        ["POST", `/api/tables/${baseTable}/runs/cancel`, { key, body: { dispatchId: s } }],
        ["POST", `/api/tables/${baseTable}/runs/cancel`, { key, body: { rowIds: [s] } }],
        ["GET", `/api/tables/${baseTable}/rows?cursor=${inUrl(s)}&limit=${inUrl(s)}`, { key }],
        ["GET", `/api/tables/${inUrl(s)}`, { key }],
        ["POST", "/api/session", { body: { apiKey: s } }],
        ...[
          { inputs: { [s]: "out" } },
          { outputs: [{ columnId: "out", from: s }] },
          { dependsOn: [s] },
        ].map((over): [string, string, CallOptions] => [
          "POST",
          "/api/tables",
          {
            key,
            body: {
              name: "ids",
              columns: [{ id: "out", name: "Out", type: "text" }],
              groups: [{ id: "g", name: "G", kind: "workflow", workflowId, ...over }],
            },
          },
        ]),
        [
          "POST",
          "/api/workflows",
          {
            key,
            body: {
              name: "ids",
              definition: {
                inputs: [{ name: s }],
                blocks: [
                  { id: "a", type: "transform", expression: "1", next: s },
                  { id: s, type: "fail", message: s },
                ],
              },
            },
          },
        ],
        ["GET", "/api/tables", { key: null, headers: { cookie: `cellflow_session=${inUrl(s)}` } }],
      ];
      for (const [method, path, opts] of probes) {
        const res = await call(method, path, opts);
        const what = `${method} ${path.slice(0, 80)} (${label})`;
        expect(res.status, `${what}: ${JSON.stringify(res.body).slice(0, 200)}`).toBeLessThan(500);
        if (res.status >= 400) ApiError.parse(res.body);
      }
    }
  });

  it("workspace names (admin) come back exactly in the session", async () => {
    for (const [label, s] of entries) {
      const body = { name: s };
      await accepts(
        `workspace name ${label}`,
        nameOk(s),
        () => call("POST", "/api/admin/workspaces", { key: ADMIN_TOKEN, body }),
        async (res) => {
          const apiKey = (res.body as { apiKey: string }).apiKey;
          return (
            await call<{ workspace: { name: string } }>("GET", "/api/session", { key: apiKey })
          ).body.workspace.name;
        },
        s,
        overLimit(body) ? [413] : [400],
      );
    }
  });
});

const now = () => Math.floor(Date.now() / 1000);
const signature = (secret: string, body: Uint8Array) => {
  const t = now();
  const mac = createHmac("sha256", secret).update(`${t}.`).update(body).digest("hex");
  return `t=${t},v1=${mac}`;
};

describe("webhook bodies", () => {
  it("a signed insert_rows delivery keeps every value exactly, or is refused with 400", async () => {
    const hook = await call<{ id: string; secret: string }>(
      "POST",
      `/api/tables/${baseTable}/hooks`,
      { key, body: { action: "insert_rows" } },
    );
    expect(hook.status).toBe(201);
    for (const [label, s] of entries) {
      const body = Buffer.from(JSON.stringify({ rows: [{ data: { t: s, j: { [s]: s } } }] }));
      await accepts(
        `webhook ${label}`,
        textOk(s) && s !== "__proto__",
        () =>
          call("POST", `/api/hooks/${hook.body.id}`, {
            rawBody: new Uint8Array(body),
            headers: {
              "content-type": "application/json",
              "cellflow-signature": signature(hook.body.secret, body),
            },
          }),
        async (res) => {
          const id = (res.body as { rowIds: string[] }).rowIds[0];
          return (await get<RowView>(`/api/tables/${baseTable}/rows/${id}`)).data;
        },
        { t: s, j: { [s]: s } },
        body.byteLength > MIB ? [413] : [400],
      );
    }
  });
});

describe("CSV import", () => {
  it("headers and cells keep every value exactly, or the file is refused with 400", async () => {
    for (const [label, s] of entries) {
      // Text that is not valid UTF-16 cannot be put in a UTF-8 file at all (invalid bytes
      // have their own test below).
      if (!s.isWellFormed()) continue;
      const name = nameOk(s) && s !== "__proto__" ? s : "Value";
      const table = await call<{ id: string }>("POST", "/api/tables", {
        key,
        body: {
          name: "csv",
          columns: [
            { id: "m", name: "Marker", type: "text" },
            { id: "c", name, type: "text" },
          ],
        },
      });
      expect(table.status).toBe(201);
      const file = `Marker,${csvField(name)}\r\nrow,${csvField(s)}\r\n`;
      await accepts(
        `csv ${label}`,
        // An empty cell leaves the column absent, which is also "not altered".
        textOk(s),
        () =>
          call("POST", `/api/tables/${table.body.id}/import`, {
            key,
            rawBody: file,
            headers: { "content-type": "text/csv" },
          }),
        async () => {
          const rows = await get<{ rows: RowView[] }>(`/api/tables/${table.body.id}/rows`);
          return rows.rows.map((r) => r.data);
        },
        [s === "" ? { m: "row" } : { m: "row", c: s }],
      );
    }
  });

  it("export neutralizes formulas (=, +, -, @, tab, CR first) in cells and headers; numbers stay numbers; the data is untouched", async () => {
    const table = await call<{ id: string }>("POST", "/api/tables", {
      key,
      body: {
        name: "=formula table",
        columns: [
          { id: "t", name: "=Header", type: "text" },
          { id: "n", name: "N", type: "number" },
        ],
      },
    });
    const formulas = [
      "=1+1",
      "+cmd|' /C calc'!A0",
      "-2+3",
      "@SUM(A1)",
      "\tindent",
      "\rcr",
      "plain",
    ];
    const file = [
      "'=Header,N",
      ...formulas.map((f, i) => `${csvField(f)},${i === 0 ? "-5" : String(i)}`),
    ].join("\r\n");
    const imported = await call<{ inserted: number }>(
      "POST",
      `/api/tables/${table.body.id}/import`,
      { key, rawBody: file, headers: { "content-type": "text/csv" } },
    );
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    expect(imported.body.inserted).toBe(formulas.length);
    // Stored as sent: the neutralizing is only in what a spreadsheet is given.
    const rows = await get<{ rows: RowView[] }>(`/api/tables/${table.body.id}/rows`);
    expect(rows.rows.map((r) => r.data.t)).toEqual(formulas);

    const exported = await call<string>("GET", `/api/tables/${table.body.id}/export`, { key });
    expect(exported.status).toBe(200);
    const records = [...csvRecords(exported.body)].map((r) => {
      if (!r.ok) throw new Error(r.reason.message);
      return r.value.fields;
    });
    expect(records[0]).toEqual(["'=Header", "N"]);
    expect(records.slice(1)).toEqual([
      ["'=1+1", "-5"],
      ["'+cmd|' /C calc'!A0", "1"],
      ["'-2+3", "2"],
      ["'@SUM(A1)", "3"],
      ["'\tindent", "4"],
      ["'\rcr", "5"],
      ["plain", "6"],
    ]);
    for (const fields of records.slice(1))
      expect(fields[0], "a cell a spreadsheet would run").not.toMatch(/^[=+\-@\t\r]/);
  });

  it("NUL in a cell, raw or escaped in a json cell, is a 400 naming the line and column", async () => {
    const table = await call<{ id: string }>("POST", "/api/tables", {
      key,
      body: {
        name: "nul",
        columns: [
          { id: "t", name: "T", type: "text" },
          { id: "j", name: "J", type: "json" },
        ],
      },
    });
    for (const file of ["T,J\r\na\u0000b,1\r\n", 'T,J\r\nok,"""a\\u0000b"""\r\n']) {
      const before = await dbFingerprint();
      const res = await call("POST", `/api/tables/${table.body.id}/import`, {
        key,
        rawBody: file,
        headers: { "content-type": "text/csv" },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      const error = ApiError.parse(res.body).error;
      expect(error.issues?.[0]?.path).toMatch(/^line 2, column [TJ]$/);
      expect(error.issues?.[0]?.message).toMatch(/NUL/);
      expect(await dbFingerprint()).toBe(before);
    }
  });
});

/** `levels` arrays inside each other around 1. */
const nested = (levels: number) => `${"[".repeat(levels)}1${"]".repeat(levels)}`;

async function expectRefusedRaw(
  what: string,
  send: () => Promise<ApiResponse>,
  message: RegExp,
): Promise<void> {
  const before = await dbFingerprint();
  const res = await send();
  expect(res.status, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(400);
  const error = ApiError.parse(res.body).error;
  expect(error.issues?.length, what).toBeGreaterThan(0);
  expect(`${error.message} ${error.issues?.map((i) => i.message).join(" ")}`, what).toMatch(
    message,
  );
  expect(await dbFingerprint(), `${what} wrote something`).toBe(before);
}

describe("the holes: __proto__ keys, deep nesting, invalid UTF-8, NUL", () => {
  const raw = (method: string, path: string, body: string | Uint8Array<ArrayBuffer>) => () =>
    call(method, path, { key, rawBody: body, headers: { "content-type": "application/json" } });

  it("a __proto__ key is refused with 400 wherever JSON is taken, never silently dropped", async () => {
    const row = (
      await call<{ rows: { id: string }[] }>("POST", `/api/tables/${baseTable}/rows`, {
        key,
        body: { rows: [{ data: { j: 1 } }] },
      })
    ).body.rows[0]?.id;
    const cases: [string, string, string][] = [
      [
        "json value",
        `/api/tables/${baseTable}/rows`,
        '{"rows":[{"data":{"j":{"__proto__":{"x":1}}}}]}',
      ],
      [
        "nested json value",
        `/api/tables/${baseTable}/rows`,
        '{"rows":[{"data":{"j":[{"a":{"__proto__":1}}]}}]}',
      ],
      ["row data", `/api/tables/${baseTable}/rows`, '{"rows":[{"data":{"__proto__":{"t":"x"}}}]}'],
      ["top level", "/api/tables", '{"name":"x","__proto__":{"name":"y"}}'],
      ["edit", `/api/tables/${baseTable}/rows/${row}`, '{"data":{"j":{"__proto__":[]}}}'],
      [
        "http block body",
        "/api/workflows",
        '{"name":"w","definition":{"blocks":[{"id":"h","type":"http","method":"POST","url":"https://x.test","body":{"__proto__":{"a":1}}}]}}',
      ],
    ];
    for (const [what, path, body] of cases)
      await expectRefusedRaw(
        what,
        raw(what === "edit" ? "PATCH" : "POST", path, body),
        /__proto__/,
      );
  });

  it("JSON nested beyond 100 levels is a 400 (5,000 and 100,000 levels too), and 100 levels are fine", async () => {
    const wrap = (value: string) => `{"rows":[{"data":{"j":${value}}}]}`;
    // The body wraps the value in 4 levels: 96 more make exactly 100.
    const ok = await call<{ rows: { id: string }[] }>("POST", `/api/tables/${baseTable}/rows`, {
      key,
      rawBody: wrap(nested(96)),
      headers: { "content-type": "application/json" },
    });
    expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).toBe(201);
    const back = await get<RowView>(`/api/tables/${baseTable}/rows/${ok.body.rows[0]?.id}`);
    expect(JSON.stringify(back.data.j)).toBe(nested(96));
    for (const levels of [97, 5_000, 100_000])
      await expectRefusedRaw(
        `${levels} levels`,
        raw("POST", `/api/tables/${baseTable}/rows`, wrap(nested(levels))),
        /nested too deeply|at most 100 levels/,
      );
    // Brackets inside strings are text, not nesting.
    const text = await call("POST", `/api/tables/${baseTable}/rows`, {
      key,
      body: { rows: [{ data: { t: "[".repeat(5_000) } }] },
    });
    expect(text.status).toBe(201);
    await expectRefusedRaw(
      "deep http block body",
      raw(
        "POST",
        "/api/workflows",
        `{"name":"w","definition":{"blocks":[{"id":"h","type":"http","method":"POST","url":"https://x.test","body":${nested(5_000)}}]}}`,
      ),
      /nested too deeply/,
    );
  });

  it("a CSV json cell nested 5,000 levels is a 400", async () => {
    const table = await call<{ id: string }>("POST", "/api/tables", {
      key,
      body: { name: "deep", columns: [{ id: "j", name: "J", type: "json" }] },
    });
    const before = await dbFingerprint();
    const res = await call("POST", `/api/tables/${table.body.id}/import`, {
      key,
      rawBody: `J\r\n${csvField(nested(5_000))}\r\n`,
      headers: { "content-type": "text/csv" },
    });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
    expect(ApiError.parse(res.body).error.issues?.[0]?.message).toMatch(/100 levels/);
    expect(await dbFingerprint()).toBe(before);
  });

  const INVALID_UTF8: Record<string, number[]> = {
    "a lone continuation byte": [0x80],
    "0xFF": [0xff],
    "an overlong slash": [0xc0, 0xaf],
    "an encoded surrogate": [0xed, 0xa0, 0x80],
    "a truncated sequence": [0xe2, 0x82],
    "beyond U+10FFFF": [0xf4, 0x90, 0x80, 0x80],
  };
  const withBytes = (before: string, bad: number[], after: string) =>
    new Uint8Array([...Buffer.from(before), ...bad, ...Buffer.from(after)]);

  it("invalid UTF-8 in a JSON body is a 400, never stored as U+FFFD", async () => {
    for (const [what, bad] of Object.entries(INVALID_UTF8)) {
      await expectRefusedRaw(
        `table name with ${what}`,
        raw("POST", "/api/tables", withBytes('{"name":"x', bad, '"}')),
        /UTF-8/,
      );
      await expectRefusedRaw(
        `row value with ${what}`,
        raw(
          "POST",
          `/api/tables/${baseTable}/rows`,
          withBytes('{"rows":[{"data":{"t":"', bad, '"}}]}'),
        ),
        /UTF-8/,
      );
    }
    // The character itself, properly encoded, is ordinary text.
    const fine = await call<{ name: string }>("POST", "/api/tables", {
      key,
      rawBody: new Uint8Array(Buffer.from('{"name":"x\uFFFD"}')),
      headers: { "content-type": "application/json" },
    });
    expect(fine.status).toBe(201);
    expect(fine.body.name).toBe("x\uFFFD");
  });

  it("invalid UTF-8 in a CSV file or a signed webhook is a 400", async () => {
    const hook = await call<{ id: string; secret: string }>(
      "POST",
      `/api/tables/${baseTable}/hooks`,
      { key, body: { action: "insert_rows" } },
    );
    for (const [what, bad] of Object.entries(INVALID_UTF8)) {
      await expectRefusedRaw(
        `csv with ${what}`,
        () =>
          call("POST", `/api/tables/${baseTable}/import`, {
            key,
            rawBody: withBytes("T\r\nx", bad, "\r\n"),
            headers: { "content-type": "text/csv" },
          }),
        /UTF-8/,
      );
      const body = withBytes('{"rows":[{"data":{"t":"', bad, '"}}]}');
      await expectRefusedRaw(
        `webhook with ${what}`,
        () =>
          call("POST", `/api/hooks/${hook.body.id}`, {
            rawBody: body,
            headers: {
              "content-type": "application/json",
              "cellflow-signature": signature(hook.body.secret, body),
            },
          }),
        /UTF-8/,
      );
    }
  });

  it("NUL in text is a 400 whose message says NUL, in values, names, keys and secrets", async () => {
    const cases: [string, string, string, unknown][] = [
      [
        "row value",
        "POST",
        `/api/tables/${baseTable}/rows`,
        { rows: [{ data: { t: "a\u0000" } }] },
      ],
      [
        "json key",
        "POST",
        `/api/tables/${baseTable}/rows`,
        { rows: [{ data: { j: { "k\u0000": 1 } } }] },
      ],
      ["table name", "POST", "/api/tables", { name: "a\u0000b" }],
      ["workflow name", "POST", "/api/workflows", { name: "\u0000", definition: { blocks: [] } }],
      ["secret value", "PUT", "/api/secrets/NUL_TEST", { value: "x\u0000y" }],
    ];
    for (const [what, method, path, body] of cases)
      await expectRefusedRaw(what, post(method, path, body), /NUL/);
  });
});

import { beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@/client/cellflow-client";
import { ApiError } from "@/contracts/common";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { useWorker } from "../helpers/engine";
import { dbFingerprint } from "../helpers/fingerprint";
import { newWorkspace, upperDefinition } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { call } from "../helpers/raw-api";
import { strictCsv } from "../helpers/strict-csv";
import { workflowTable } from "../helpers/tables";

let key: string;

const columns: Schemas["Column"][] = [
  { id: "name", name: "Name", type: "text" },
  { id: "n", name: "N", type: "number" },
  { id: "ok", name: "OK", type: "boolean" },
  { id: "day", name: "Day", type: "date" },
  { id: "meta", name: "Meta", type: "json" },
  { id: "tier", name: "Tier", type: "select", options: ["gold", "silver"] },
  { id: "note", name: "Note", type: "text" },
];

type Row = { id: string; position: number; data: Record<string, unknown>; cells: object };
type Refusal = {
  error: { code: string; message: string; issues: { path: string; message: string }[] };
};

async function newTable(
  name = "Typed",
  cols: Schemas["Column"][] = columns,
  groups: Schemas["WorkflowGroup"][] = [],
) {
  const t = await apiClient(key).POST("/api/tables", { body: { name, columns: cols, groups } });
  expect(t.response.status).toBe(201);
  return dataOf(t).id;
}

const importCsv = (tableId: string, csv: string, k = key) =>
  call<{ inserted: number } & Refusal>("POST", `/api/tables/${tableId}/import`, {
    key: k,
    rawBody: csv,
    headers: { "content-type": "text/csv" },
  });

async function allRows(tableId: string): Promise<Row[]> {
  const res = await apiClient(key).GET("/api/tables/{id}/rows", {
    params: { path: { id: tableId }, query: { limit: 1000 } },
  });
  expect(dataOf(res).nextCursor).toBeNull();
  return dataOf(res).rows;
}

async function exportCsv(tableId: string): Promise<string> {
  const res = await apiClient(key).GET("/api/tables/{id}/export", {
    params: { path: { id: tableId } },
    parseAs: "text",
  });
  expect(res.response.status).toBe(200);
  return dataOf(res);
}

/** Read by an independent, strict RFC 4180 reader, so the export is not checked with our own parser. */
function records(csv: string): string[][] {
  expect(csv.endsWith("\r\n")).toBe(true);
  return strictCsv(csv);
}

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url);
  key = (await newWorkspace()).key;
});

// A BOM, CRLF line ends, quoted commas, quotes, line breaks (CRLF and LF) and unicode.
const TRICKY =
  "\uFEFFName,N,OK,Day,Meta,Tier,Note\r\n" +
  '"Acme, Inc.",42,yes,2026-12-02,"{""a"":[1,null]}",gold,"line one\r\nline two"\r\n' +
  '"He said ""hi""",-3.5,FALSE,2026-12-02T10:00:00Z,"""str""",silver,"日本語 🎉\nünïcödé"\r\n' +
  "Plain,,,,,,\r\n";

const TRICKY_DATA = [
  {
    name: "Acme, Inc.",
    n: 42,
    ok: true,
    day: "2026-12-02",
    meta: { a: [1, null] },
    tier: "gold",
    note: "line one\r\nline two",
  },
  {
    name: 'He said "hi"',
    n: -3.5,
    ok: false,
    day: "2026-12-02T10:00:00Z",
    meta: "str",
    tier: "silver",
    note: "日本語 🎉\nünïcödé",
  },
  { name: "Plain" },
];

describe("CSV import", () => {
  it("reads a BOM, CRLF and quoted commas, quotes and line breaks; converts each value to its column's type; empty cells stay absent", async () => {
    const t = await newTable();
    const res = await importCsv(t, TRICKY);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ inserted: 3 });
    expect((await allRows(t)).map((r) => r.data)).toEqual(TRICKY_DATA);
  });

  it("matches headers by name first, then by id; order is free; LF-only files and blank lines work", async () => {
    // Column "code" is named "name": the header "name" means it, not the column with id "name".
    const t = await newTable("ids", [
      { id: "name", name: "Title", type: "text" },
      { id: "code", name: "name", type: "text" },
      { id: "n", name: "N", type: "number" },
    ]);
    const res = await importCsv(t, "n,name,Title\n 7 ,by name,by title\n\n1e3,,x\n");
    expect(res.body).toEqual({ inserted: 2 });
    expect((await allRows(t)).map((r) => r.data)).toEqual([
      { n: 7, code: "by name", name: "by title" },
      { n: 1000, name: "x" },
    ]);
  });

  it("accepts every boolean spelling and JSON of every kind", async () => {
    const t = await newTable("kinds", [
      { id: "b", name: "B", type: "boolean" },
      { id: "j", name: "J", type: "json" },
    ]);
    const csv = 'B,J\nTrue,1\nno,"[1,""x""]"\n1,true\n0,{}\nYES,null\n';
    expect((await importCsv(t, csv)).body).toEqual({ inserted: 5 });
    expect((await allRows(t)).map((r) => r.data)).toEqual([
      { b: true, j: 1 },
      { b: false, j: [1, "x"] },
      { b: true, j: true },
      { b: false, j: {} },
      { b: true },
    ]);
  });

  it("hostile strings are stored literally, never interpreted", async () => {
    const t = await newTable("hostile", [{ id: "s", name: "S", type: "text" }]);
    const hostile = [
      "'; DROP TABLE rows; --",
      "Robert'); DELETE FROM tables;--",
      "$1 $$ \\x00 \\u0000 %s %n",
      "NULL",
      "null",
      "<script>alert(1)</script>",
      "🎉".repeat(20_000),
      "ए".repeat(30_000),
    ];
    const csv = `S\n${hostile.map((s) => `"${s.replaceAll('"', '""')}"`).join("\n")}\n`;
    expect((await importCsv(t, csv)).body).toEqual({ inserted: hostile.length });
    expect((await allRows(t)).map((r) => r.data.s)).toEqual(hostile);
  });

  it("a header naming a group's output column is allowed: it is an ordinary column", async () => {
    const { tableId: t } = await workflowTable(key, {
      workflow: { blocks: [{ id: "out", type: "transform", expression: "'x'" }] },
      outputs: { size: "out" },
      columns: [{ id: "size", name: "Size", type: "text" }],
      rows: [],
    });
    expect((await importCsv(t, "Size\nbig\n")).body).toEqual({ inserted: 1 });
    expect((await allRows(t)).map((r) => r.data)).toEqual([{ size: "big" }]);
  });

  it("unknown headers are 400 with issues naming each, and nothing is inserted", async () => {
    const t = await newTable();
    const before = await dbFingerprint();
    const res = await importCsv(t, "Name,Colour,name2\nx,y,z\n");
    expect(res.status).toBe(400);
    expect(ApiError.parse(res.body).error.code).toBe("validation_failed");
    const messages = res.body.error.issues.map((i) => i.message).join("\n");
    expect(messages).toContain('"Colour"');
    expect(messages).toContain('"name2"');
    expect(res.body.error.issues).toHaveLength(2);
    expect(await dbFingerprint()).toBe(before);
  });

  it("a header that names a column twice, or names several columns, is 400", async () => {
    const t = await newTable("dups", [
      { id: "a", name: "Same", type: "text" },
      { id: "b", name: "Same", type: "text" },
      { id: "c", name: "C", type: "text" },
    ]);
    const twice = await importCsv(t, "C,c\n1,2\n");
    expect(twice.status).toBe(400);
    const ambiguous = await importCsv(t, "Same\n1\n");
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error.issues[0]?.message).toContain("use a column id");
    expect((await importCsv(t, "a,b\n1,2\n")).body).toEqual({ inserted: 1 });
  });

  const badValues: [string, string, string][] = [
    ["a number column", "N", "12abc"],
    ["a number column (hex is not a number)", "N", "0x10"],
    ["a boolean column", "OK", "maybe"],
    ["a date column", "Day", "tomorrow"],
    ["a json column", "Meta", "{not json"],
    ["a select column", "Tier", "bronze"],
  ];
  for (const [where, header, value] of badValues) {
    it(`a bad value in ${where} refuses the whole file with its line and column, inserting nothing`, async () => {
      const t = await newTable();
      // 1,500 good rows first: they would fill more than one batch.
      const good = Array.from({ length: 1500 }, (_, i) => `row ${i}`).join("\n");
      const before = await dbFingerprint();
      const res = await importCsv(t, `Name,${header}\n${good}\nbad,${value}\n`);
      expect(res.status).toBe(400);
      expect(res.body.error.issues).toEqual([
        { path: `line 1502, column ${header}`, message: expect.any(String) },
      ]);
      expect(await dbFingerprint()).toBe(before);
    });
  }

  it("lines are counted as an editor shows them, across quoted line breaks", async () => {
    const t = await newTable();
    const res = await importCsv(
      t,
      'Name,N\r\n"two\r\nlines",1\r\n"three\nmore\rlines",2\r\nx,oops\r\n',
    );
    expect(res.body.error.issues).toEqual([
      { path: "line 7, column N", message: "must be a number" },
    ]);
  });

  it("lists at most 20 issues and counts them all in the message", async () => {
    const t = await newTable();
    const csv = `N\n${Array.from({ length: 35 }, () => "x").join("\n")}\n`;
    const res = await importCsv(t, csv);
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toHaveLength(20);
    expect(res.body.error.message).toContain("35 problems");
  });

  it("rows with more values than headers are refused; trailing empty values are not", async () => {
    const t = await newTable();
    expect((await importCsv(t, "Name,N\na,1,,\n")).body).toEqual({ inserted: 1 });
    const res = await importCsv(t, "Name,N\na,1,extra\n");
    expect(res.status).toBe(400);
    expect(res.body.error.issues[0]?.path).toBe("line 2");
  });

  it("an unclosed quote, text after a closing quote and an empty file are 400", async () => {
    const t = await newTable();
    for (const csv of ['Name\n"never closed\n', 'Name\n"a"b\n', "", "\uFEFF"]) {
      const before = await dbFingerprint();
      const res = await importCsv(t, csv);
      expect(res.status, JSON.stringify(csv)).toBe(400);
      ApiError.parse(res.body);
      expect(await dbFingerprint()).toBe(before);
    }
  });

  it("NUL characters are refused with 400, raw or escaped in JSON", async () => {
    const t = await newTable();
    for (const csv of ["Name\na\u0000b\n", 'Meta\n"""\\u0000"""\n', 'Meta\n"""\\ud800"""\n']) {
      const before = await dbFingerprint();
      const res = await importCsv(t, csv);
      expect(res.status).toBe(400);
      expect(res.body.error.issues[0]?.message).toMatch(/NUL/);
      expect(await dbFingerprint()).toBe(before);
    }
  });

  it("a JSON body or a form upload is refused: the body must be the CSV itself", async () => {
    const t = await newTable();
    const res = await call("POST", `/api/tables/${t}/import`, {
      key,
      body: { rows: [{ data: { name: "x" } }] },
    });
    expect(res.status).toBe(400);
  });

  it("honours a charset named in the content type; an unknown one is 400", async () => {
    const t = await newTable();
    const latin1 = new Uint8Array([...Buffer.from("Name\nSoci"), 0xe9, ...Buffer.from("t"), 0xe9]);
    const res = await call("POST", `/api/tables/${t}/import`, {
      key,
      rawBody: latin1,
      headers: { "content-type": "text/csv; charset=ISO-8859-1" },
    });
    expect(res.status).toBe(201);
    expect((await allRows(t)).map((r) => r.data)).toEqual([{ name: "Société" }]);
    const unknown = await call("POST", `/api/tables/${t}/import`, {
      key,
      rawBody: "Name\nx\n",
      headers: { "content-type": "text/csv; charset=klingon" },
    });
    expect(unknown.status).toBe(400);
  });

  it("a header-only file inserts nothing and answers 201 { inserted: 0 }", async () => {
    const t = await newTable();
    expect(await importCsv(t, "Name,N\r\n")).toMatchObject({ status: 201, body: { inserted: 0 } });
  });

  it("more than 1,000 rows go in as batches of one import, in file order", async () => {
    const t = await newTable();
    const csv = `N\n${Array.from({ length: 2500 }, (_, i) => String(i)).join("\n")}\n`;
    expect((await importCsv(t, csv)).body).toEqual({ inserted: 2500 });
    const out = records(await exportCsv(t));
    expect(out.slice(1).map((r) => Number(r[1]))).toEqual(
      Array.from({ length: 2500 }, (_, i) => i),
    );
  });

  it("a body declared over 500 MiB is 413 before it is read (the limits met midway: api-csv-stream)", async () => {
    const t = await newTable();
    const before = await dbFingerprint();
    const declared = await call("POST", `/api/tables/${t}/import`, {
      key,
      rawBody: "Name\na\n",
      headers: { "content-type": "text/csv", "content-length": String(501 * 1024 * 1024) },
    });
    expect(declared.status).toBe(413);
    expect(ApiError.parse(declared.body).error.code).toBe("payload_too_large");
    expect(await dbFingerprint()).toBe(before);
  });

  it("imported rows auto-run like rows from POST /rows", async () => {
    const { tableId: t } = await workflowTable(key, {
      workflow: upperDefinition,
      outputs: { up: "out" },
      columns: [
        { id: "v", name: "V", type: "text" },
        { id: "w", name: "W", type: "text" },
        { id: "up", name: "Up", type: "text" },
      ],
      group: { inputs: { v: "v" }, dependsOn: ["v"], autoRun: true },
      rows: [],
    });
    expect((await importCsv(t, "V,W\nabc,1\n,2\nxyz,3\n")).body).toEqual({ inserted: 3 });
    let rows: Row[] = [];
    const done = await waitFor(async () => {
      rows = await allRows(t);
      return rows.filter((r) => r.data.up !== undefined).length === 2;
    }, 30_000);
    expect(done, JSON.stringify(rows)).toBe(true);
    expect(rows.map((r) => r.data)).toEqual([
      { v: "abc", w: "1", up: "ABC" },
      { w: "2" },
      { v: "xyz", w: "3", up: "XYZ" },
    ]);
    // The row without its dependency was not run.
    expect(rows[1]?.cells).toEqual({});
    // The outputs land before the run's own end is recorded; wait for it, so its last
    // event cannot fall inside the next test's fingerprints.
    const ended = await waitFor(async () => {
      const runs = await apiClient(key).GET("/api/tables/{id}/runs", {
        params: { path: { id: t } },
      });
      const list = dataOf(runs).runs;
      return list.length > 0 && list.every((r) => r.status !== "active");
    }, 30_000);
    expect(ended).toBe(true);
  });

  it("another workspace's table is 404 and nothing is inserted", async () => {
    const t = await newTable();
    const other = await newWorkspace("other");
    const before = await dbFingerprint();
    expect((await importCsv(t, "Name\nx\n", other.key)).status).toBe(404);
    expect(
      (await apiClient(other.key).GET("/api/tables/{id}/export", { params: { path: { id: t } } }))
        .response.status,
    ).toBe(404);
    expect(await dbFingerprint()).toBe(before);
  });
});

describe("CSV export", () => {
  it("round trip: exporting an import of a tricky file gives back the same values", async () => {
    const t = await newTable();
    await importCsv(t, TRICKY);
    const csv = await exportCsv(t);
    expect(records(csv)).toEqual([
      ["Name", "N", "OK", "Day", "Meta", "Tier", "Note"],
      ["Acme, Inc.", "42", "true", "2026-12-02", '{"a":[1,null]}', "gold", "line one\r\nline two"],
      [
        'He said "hi"',
        "-3.5",
        "false",
        "2026-12-02T10:00:00Z",
        '"str"',
        "silver",
        "日本語 🎉\nünïcödé",
      ],
      ["Plain", "", "", "", "", "", ""],
    ]);
    // And the export imports back to the same row data.
    const again = await newTable("again");
    expect((await importCsv(again, csv)).body).toEqual({ inserted: 3 });
    expect((await allRows(again)).map((r) => r.data)).toEqual(TRICKY_DATA);
  });

  it("answers text/csv as an attachment named after the table, sanitized", async () => {
    const t = await newTable('Q3 "Leads" / Société\r\nend');
    const res = await apiClient(key).GET("/api/tables/{id}/export", {
      params: { path: { id: t } },
      parseAs: "text",
    });
    expect(res.response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.response.headers.get("content-disposition")).toBe(
      'attachment; filename="Q3 _Leads_ _ Societe_end.csv"',
    );
    expect(dataOf(res)).toBe("Name,N,OK,Day,Meta,Tier,Note\r\n");
  });

  it("neutralizes formula-looking text with a leading quote, but writes negative numbers as numbers", async () => {
    const t = await newTable();
    const formulas = ["=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tTab", "\rCR"];
    const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: t } },
      body: {
        rows: [
          ...formulas.map((name) => ({ data: { name } })),
          { data: { name: "plain", n: -5, meta: "=json string" } },
        ],
      },
    });
    expect(ins.response.status).toBe(201);
    const out = records(await exportCsv(t));
    expect(out.slice(1, -1).map((r) => r[0])).toEqual(formulas.map((f) => `'${f}`));
    expect(out.at(-1)?.slice(0, 5)).toEqual(["plain", "-5", "", "", '"=json string"']);
  });

  it("formula-looking column names are neutralized too, and such an export still imports", async () => {
    const t = await newTable("f", [{ id: "a", name: "=A", type: "text" }]);
    await importCsv(t, "a\nx\n");
    const csv = await exportCsv(t);
    expect(csv).toBe("'=A\r\nx\r\n");
    const again = await newTable("f2", [{ id: "a", name: "=A", type: "text" }]);
    expect((await importCsv(again, csv)).body).toEqual({ inserted: 1 });
  });

  it("exports every row in position order across pages", async () => {
    const t = await newTable();
    for (let k = 0; k < 3; k++) {
      const rows = Array.from({ length: 1000 }, (_, i) => ({ data: { n: k * 1000 + i } }));
      await apiClient(key).POST("/api/tables/{id}/rows", {
        params: { path: { id: t } },
        body: { rows },
      });
    }
    const out = records(await exportCsv(t));
    expect(out).toHaveLength(3001);
    expect(out.slice(1).map((r) => Number(r[1]))).toEqual(
      Array.from({ length: 3000 }, (_, i) => i),
    );
  });
});

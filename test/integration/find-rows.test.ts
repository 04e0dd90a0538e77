/**
 * GET /rows with `where`, `orderBy` and `dir`: each column type sorts by its typed value,
 * empty and mistyped values last in both directions, ties by position; walking the pages
 * of any filter and order returns every matching row exactly once, in the order one read
 * would give; a cell-status condition finds the rows whose group errored; bad filters,
 * orders and cursors (tampered or of another order) are 400s, never 500s.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { TableSchema } from "@/contracts/table";
import type { Where } from "@/contracts/where";
import { checkWhere } from "@/domain/where";
import { startRun } from "@/engine/dispatcher";
import { whereSql } from "@/store/rows/where-sql";
import { useTestDatabase } from "../helpers/db";
import { RecordingBackend } from "../helpers/engine-harness";
import { newWorkspace } from "../helpers/fixtures";
import { call } from "../helpers/raw-api";
import { typedTable } from "../helpers/tables";

const db = () => getDatabase().db;
let key: string;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

const table = (rows: Record<string, unknown>[]) => typedTable(key, "find", rows);

/** Values a workflow could write behind the API's checks: each of another type than its column. */
async function writeMistyped(rowId: string): Promise<void> {
  await db().execute(
    sql`update rows set data = '{"name": 7, "n": "ten", "ok": "yes", "day": "not a date", "tags": 5, "tier": true}'::jsonb
         where id = ${rowId}`,
  );
}

interface Query {
  where?: Where | string;
  orderBy?: string;
  dir?: string;
  limit?: number;
  cursor?: string;
  before?: string;
  from?: "end";
  seek?: number;
  total?: boolean;
}
interface Page {
  rows: { id: string; position: number }[];
  nextCursor: string | null;
  prevCursor: string | null;
  total?: number;
}

function rowsUrl(tableId: string, q: Query): string {
  const params = new URLSearchParams();
  if (q.where !== undefined)
    params.set("where", typeof q.where === "string" ? q.where : JSON.stringify(q.where));
  if (q.orderBy) params.set("orderBy", q.orderBy);
  if (q.dir) params.set("dir", q.dir);
  if (q.limit) params.set("limit", String(q.limit));
  if (q.cursor) params.set("cursor", q.cursor);
  if (q.before) params.set("before", q.before);
  if (q.from) params.set("from", q.from);
  if (q.seek !== undefined) params.set("seek", String(q.seek));
  if (q.total) params.set("total", "true");
  return `/api/tables/${tableId}/rows?${params}`;
}

async function page(tableId: string, q: Query): Promise<Page> {
  const res = await call<Page>("GET", rowsUrl(tableId, q), { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Every page of a query, walked with its cursors: the row ids in the order served. */
async function walk(tableId: string, q: Query): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const p = await page(tableId, { ...q, ...(cursor ? { cursor } : {}) });
    ids.push(...p.rows.map((r) => r.id));
    if (!p.nextCursor) return ids;
    cursor = p.nextCursor;
  }
  throw new Error("the cursor never ended");
}

describe("GET /rows orderBy", () => {
  // Row 5 holds a value of another type in every column.
  const ROWS: Record<string, unknown>[] = [
    { name: "banana", n: 10, ok: true, day: "2024-01-15", tags: ["x"], tier: "pro" },
    { name: "Apple", n: 2.5, ok: false, day: "2024-03-01T12:00:00Z", tags: { a: 1 }, tier: "free" },
    { name: "", n: -1, day: "2023-12-31T23:30:00-02:00", tags: [] },
    { name: "cherry", n: 10, tags: "zz" },
    {},
    {},
  ];
  let t: { tableId: string; ids: string[] };
  beforeAll(async () => {
    t = await table(ROWS);
    await writeMistyped(t.ids[5] as string);
  });

  const cases: [string, "asc" | "desc", number[]][] = [
    ["name", "asc", [1, 0, 3, 2, 4, 5]],
    ["name", "desc", [3, 0, 1, 2, 4, 5]],
    ["n", "asc", [2, 1, 0, 3, 4, 5]],
    ["n", "desc", [0, 3, 1, 2, 4, 5]],
    ["ok", "asc", [1, 0, 2, 3, 4, 5]],
    ["ok", "desc", [0, 1, 2, 3, 4, 5]],
    ["day", "asc", [2, 0, 1, 3, 4, 5]],
    ["day", "desc", [1, 0, 2, 3, 4, 5]],
    // JSON by its text (bytewise in this database): "zz" < 5 < [..] < {..}; [] is empty.
    ["tags", "asc", [3, 5, 0, 1, 2, 4]],
    ["tier", "desc", [0, 1, 2, 3, 4, 5]],
  ];
  it.each(cases)(
    "orderBy %s %s: typed values in order, empty and mistyped ones last by position",
    async (column, dir, expected) => {
      const order = (await walk(t.tableId, { orderBy: column, dir, limit: 2 })).map((id) =>
        t.ids.indexOf(id),
      );
      expect(order).toEqual(expected);
    },
  );

  it("without orderBy rows come in position order, and dir=desc reverses it", async () => {
    expect(await walk(t.tableId, { limit: 4 })).toEqual(t.ids);
    expect(await walk(t.tableId, { dir: "desc", limit: 4 })).toEqual([...t.ids].reverse());
  });
});

describe("GET /rows paging under where and orderBy", () => {
  const ROWS = 80;
  let t: { tableId: string; ids: string[]; schema: TableSchema };
  beforeAll(async () => {
    // Few distinct values, so many rows tie; some values absent, a few mistyped.
    const rows = Array.from({ length: ROWS }, (_, i) => {
      const data: Record<string, unknown> = {};
      if (i % 7 !== 0) data.name = ["a", "B", "c", "a b"][i % 4];
      if (i % 5 !== 0) data.n = [1, 2.5, -3, 1][i % 4];
      if (i % 3 !== 0) data.ok = i % 2 === 0;
      if (i % 4 !== 0)
        data.day = ["2024-01-01", "2024-01-01T00:00:00Z", "2023-06-30T10:00:00+05:00"][i % 3];
      if (i % 6 !== 0) data.tags = [["x"], [], { k: i % 2 }, "s"][i % 4];
      return data;
    });
    const made = await table(rows);
    for (const i of [11, 23, 47]) await writeMistyped(made.ids[i] as string);
    const [stored] = await queryRows<{ schema: unknown }>(
      db(),
      sql`select schema from tables where id = ${made.tableId}`,
    );
    t = { ...made, schema: TableSchema.parse(stored?.schema) };
  });

  const wheres: Where[] = [
    [{ column: "name", op: "eq", value: "a" }],
    [{ column: "n", op: "gte", value: 1 }],
    [{ column: "ok", op: "not_empty" }],
    [
      { column: "tags", op: "contains", value: "x" },
      { column: "name", op: "neq", value: "c" },
    ],
    [{ column: "day", op: "empty" }],
    [{ group: "g", status: null }],
  ];

  /** The ids `where` matches, straight from its SQL, in no particular order. */
  async function matching(where: Where | undefined): Promise<string[]> {
    const checked = where ? checkWhere(t.schema, where) : { ok: true as const, value: [] };
    if (!checked.ok) throw new Error(JSON.stringify(checked.reason));
    const rows = await queryRows<{ id: string }>(
      db(),
      sql`select r.id from rows r where r.table_id = ${t.tableId} and ${whereSql(checked.value)}`,
    );
    return rows.map((r) => r.id);
  }

  it("walking the pages returns every matching row exactly once, in the order of one read", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.option(fc.constantFrom(...wheres), { nil: undefined }),
        fc.option(fc.constantFrom("name", "n", "ok", "day", "tags"), { nil: undefined }),
        fc.constantFrom("asc", "desc"),
        fc.integer({ min: 1, max: 9 }),
        async (where, orderBy, dir, limit) => {
          const q = { ...(where ? { where } : {}), ...(orderBy ? { orderBy } : {}), dir };
          const paged = await walk(t.tableId, { ...q, limit });
          const whole = await page(t.tableId, { ...q, limit: 1_000 });
          expect(whole.nextCursor).toBeNull();
          expect(paged).toEqual(whole.rows.map((r) => r.id));
          expect(new Set(paged).size).toBe(paged.length);
          expect([...paged].sort()).toEqual((await matching(where)).sort());
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);

  it("from the end, before each page's prevCursor, the pages are the same rows backwards; a seek lands inside the order and pages on both ways", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.option(fc.constantFrom(...wheres), { nil: undefined }),
        fc.option(fc.constantFrom("name", "n", "ok", "day", "tags"), { nil: undefined }),
        fc.constantFrom("asc", "desc"),
        fc.integer({ min: 1, max: 9 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (where, orderBy, dir, limit, seek) => {
          const q = { ...(where ? { where } : {}), ...(orderBy ? { orderBy } : {}), dir };
          const whole = (await page(t.tableId, { ...q, limit: 1_000, total: true })).rows.map(
            (r) => r.id,
          );
          const pages: string[][] = [];
          let p = await page(t.tableId, { ...q, limit, from: "end" });
          expect(p.nextCursor).toBeNull();
          for (;;) {
            pages.unshift(p.rows.map((r) => r.id));
            if (!p.prevCursor) break;
            p = await page(t.tableId, { ...q, limit, before: p.prevCursor });
            expect(p.nextCursor).not.toBeNull();
          }
          expect(pages.flat()).toEqual(whole);
          // A seek: a run of the order; before its first row and after its last, the rest.
          const landed = await page(t.tableId, { ...q, limit, seek, total: true });
          expect(landed.total).toBe(whole.length);
          const ids = landed.rows.map((r) => r.id);
          const at = ids[0] === undefined ? whole.length : whole.indexOf(ids[0]);
          expect(ids).toEqual(whole.slice(at, at + ids.length));
          const before = landed.prevCursor
            ? (await page(t.tableId, { ...q, limit: 1_000, before: landed.prevCursor })).rows
            : [];
          const after = landed.nextCursor
            ? (await page(t.tableId, { ...q, limit: 1_000, cursor: landed.nextCursor })).rows
            : [];
          expect([...before, ...landed.rows, ...after].map((r) => r.id)).toEqual(whole);
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);

  it("a cell condition finds the rows whose group ended in error, in the order asked", async () => {
    await startRun(
      { db: db(), backend: new RecordingBackend() },
      {
        tableId: t.tableId,
        groupIds: ["g"],
        mode: "all",
        rowIds: t.ids.slice(0, 10),
        limit: null,
        window: 1,
      },
    );
    const errored = [t.ids[2], t.ids[5], t.ids[9]] as string[];
    await db().execute(
      sql`update cells set status = 'error', error = 'boom'
           where table_id = ${t.tableId} and group_id = 'g'
             and row_id in (${errored[0]}, ${errored[1]}, ${errored[2]})`,
    );
    const found = await walk(t.tableId, {
      where: [{ group: "g", status: "error" }],
      dir: "desc",
      limit: 2,
    });
    expect(found).toEqual([...errored].reverse());
  });
});

describe("GET /rows refuses what it cannot read", () => {
  let tableId: string;
  let byN: string;
  beforeAll(async () => {
    tableId = (
      await table([
        { n: 1, name: "a" },
        { n: 2, name: "b" },
        { n: 3, name: "c" },
      ])
    ).tableId;
    byN = (await page(tableId, { orderBy: "n", limit: 1 })).nextCursor ?? "";
    expect(byN).not.toBe("");
  });

  const b64 = (value: unknown) =>
    Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");
  const deep = `${"[".repeat(150)}${"]".repeat(150)}`;
  const bad: [string, Query, string][] = [
    ["where that is not JSON", { where: "[{" }, "where"],
    ["where nested too deeply", { where: deep }, "where"],
    ["where that is not a list", { where: '{"column":"n"}' }, "where"],
    [
      "where with text that cannot be stored",
      { where: [{ column: "name", op: "eq", value: "a\u0000" }] },
      "where.0.value",
    ],
    ["an unknown column in where", { where: [{ column: "nope", op: "empty" }] }, "where.0.column"],
    [
      "an operator that does not fit",
      { where: [{ column: "name", op: "gt", value: "a" }] },
      "where.0.op",
    ],
    ["an unknown group in where", { where: [{ group: "nope", status: "error" }] }, "where.0.group"],
    ["an unknown orderBy column", { orderBy: "nope" }, "orderBy"],
    ["an orderBy that is no column id", { orderBy: "N; drop" }, "orderBy"],
    ["a dir that is neither asc nor desc", { orderBy: "n", dir: "up" }, "dir"],
    ["a cursor of garbage", { cursor: "!!!" }, "cursor"],
    ["a cursor of other text", { cursor: b64("p:12") }, "cursor"],
    [
      "a cursor of another shape",
      { orderBy: "n", cursor: b64({ o: "n", d: "asc", k: 1, p: 0 }) },
      "cursor",
    ],
    [
      "a cursor with a negative position",
      { cursor: b64({ o: null, d: "asc", k: null, p: -1 }) },
      "cursor",
    ],
    ["a cursor of another column", { orderBy: "name", cursor: "BYN" }, "cursor"],
    ["a cursor of the other direction", { orderBy: "n", dir: "desc", cursor: "BYN" }, "cursor"],
    ["a cursor of a column order used without one", { cursor: "BYN" }, "cursor"],
    [
      "a number key that is no number",
      { orderBy: "n", cursor: b64({ o: "n", d: "asc", k: "1; x", p: 0 }) },
      "cursor",
    ],
    [
      "a date key that is no instant",
      { orderBy: "day", cursor: b64({ o: "day", d: "asc", k: "now", p: 0 }) },
      "cursor",
    ],
    [
      "a text key holding NUL",
      { orderBy: "name", cursor: b64({ o: "name", d: "asc", k: "a\u0000", p: 0 }) },
      "cursor",
    ],
    [
      "a text key longer than any sort key",
      { orderBy: "name", cursor: b64({ o: "name", d: "asc", k: "a".repeat(257), p: 0 }) },
      "cursor",
    ],
    [
      "a boolean key in a text order",
      { orderBy: "name", cursor: b64({ o: "name", d: "asc", k: true, p: 0 }) },
      "cursor",
    ],
    ["a key in the position order", { cursor: b64({ o: null, d: "asc", k: "1", p: 0 }) }, "cursor"],
  ];
  it.each(bad)("%s is a 400 naming it", async (_, q, path) => {
    const query = q.cursor === "BYN" ? { ...q, cursor: byN } : q;
    const res = await call<{ error: { issues?: { path: string }[] } }>(
      "GET",
      rowsUrl(tableId, query),
      { key },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(
      res.body.error.issues?.map((i) =>
        i.path.split(".").slice(0, path.split(".").length).join("."),
      ),
    ).toContain(path);
  });

  it("a well-formed cursor whose date cannot exist reads on instead of failing", async () => {
    const cursor = b64({ o: "day", d: "asc", k: "2024-13-45T00:00:00.000000Z", p: 0 });
    const res = await call<Page>("GET", rowsUrl(tableId, { orderBy: "day", cursor }), { key });
    expect(res.status).toBe(200);
  });

  it("an empty where is no filter", async () => {
    expect((await page(tableId, { where: "" })).rows).toHaveLength(3);
  });
});

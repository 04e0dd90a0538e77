/**
 * Row filters (`where`) on runs and Stops: every operator means the same on every column
 * type whatever the stored values (a malformed value matches nothing and fails nothing);
 * an unknown column or group, or an operator that does not fit the column, is a 400; a
 * run stamps exactly the matching rows, on its background pages too, and its dry run
 * counts the same; a Stop with a `where` cancels exactly the matching rows' in-flight
 * cells and the pages a run stamps after it leave those rows out. No worker runs: stamped
 * cells stay queued, so each case sees exactly what it set up.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { TASKS } from "@/backends/port";
import type { Schemas } from "@/client/cellflow-client";
import type { TableSchema } from "@/contracts/table";
import type { Where } from "@/contracts/where";
import { checkWhere, type TypedCondition } from "@/domain/where";
import { startRun } from "@/engine/dispatcher";
import { runStamper } from "@/engine/stamper";
import { stopRuns } from "@/engine/stop";
import { whereSql } from "@/store/rows/where-sql";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { RecordingBackend, taskContext } from "../helpers/engine-harness";
import { newWorkspace } from "../helpers/fixtures";
import { call } from "../helpers/raw-api";
import { typedTable } from "../helpers/tables";

const db = () => getDatabase().db;
let key: string;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

const table = (rows: Record<string, unknown>[]) => typedTable(key, "where", rows);

function typed(schema: TableSchema, where: Where): TypedCondition[] {
  const checked = checkWhere(schema, where);
  if (!checked.ok) throw new Error(JSON.stringify(checked.reason));
  return checked.value;
}

/** Indexes (insert order) of the rows a `where` matches, evaluated by Postgres. */
async function matching(
  t: { tableId: string; ids: string[]; schema: TableSchema },
  where: Where,
): Promise<number[]> {
  const rows = await queryRows<{ id: string }>(
    db(),
    sql`select r.id from rows r where r.table_id = ${t.tableId} and ${whereSql(typed(t.schema, where))}`,
  );
  return rows.map((r) => t.ids.indexOf(r.id)).sort((a, b) => a - b);
}

describe("where: what each operator matches", () => {
  // Row 5 holds values of the wrong type (written behind the API's back below): they
  // must match nothing and fail nothing.
  const ROWS: Record<string, unknown>[] = [
    { name: "Acme Corp", n: 10, ok: true, day: "2024-01-15", tags: ["b2b", "eu"], tier: "pro" },
    {
      name: "acme labs",
      n: 2.5,
      ok: false,
      day: "2024-03-01T12:00:00Z",
      tags: ["b2c"],
      tier: "free",
    },
    { name: "", n: -1, day: "2023-12-31T23:30:00-02:00", tags: [] },
    { n: 10.0, tags: { b2b: true } },
    {},
    {},
  ];
  let t: Awaited<ReturnType<typeof table>>;
  beforeAll(async () => {
    t = await table(ROWS);
    await db().execute(
      sql`update rows set data = '{"n": "ten", "day": "not a date", "tags": "b2b", "name": 7}'::jsonb
           where id = ${t.ids[5] as string}`,
    );
  });

  const cases: [string, Where, number[]][] = [
    ["text eq is exact", [{ column: "name", op: "eq", value: "Acme Corp" }], [0]],
    [
      "text neq includes empty values",
      [{ column: "name", op: "neq", value: "Acme Corp" }],
      [1, 2, 3, 4, 5],
    ],
    ["text contains ignores case", [{ column: "name", op: "contains", value: "ACME" }], [0, 1]],
    ["empty: absent, null or blank", [{ column: "name", op: "empty" }], [2, 3, 4]],
    ["not_empty", [{ column: "name", op: "not_empty" }], [0, 1, 5]],
    ["number eq compares numerically", [{ column: "n", op: "eq", value: 10 }], [0, 3]],
    ["number gt", [{ column: "n", op: "gt", value: 2.5 }], [0, 3]],
    ["number gte", [{ column: "n", op: "gte", value: 2.5 }], [0, 1, 3]],
    ["number lt skips non-numbers", [{ column: "n", op: "lt", value: 100 }], [0, 1, 2, 3]],
    ["number lte", [{ column: "n", op: "lte", value: -1 }], [2]],
    ["boolean eq false is not empty", [{ column: "ok", op: "eq", value: false }], [1]],
    ["boolean empty", [{ column: "ok", op: "empty" }], [2, 3, 4, 5]],
    ["date gt compares instants", [{ column: "day", op: "gt", value: "2024-01-01" }], [0, 1, 2]],
    ["date lt", [{ column: "day", op: "lt", value: "2024-01-15T00:00:01Z" }], [0, 2]],
    ["date eq across offsets", [{ column: "day", op: "eq", value: "2024-01-01T01:30:00Z" }], [2]],
    ["json contains an array element", [{ column: "tags", op: "contains", value: "b2b" }], [0]],
    ["json eq compares documents", [{ column: "tags", op: "eq", value: ["b2c"] }], [1]],
    ["json empty: [] and {} too", [{ column: "tags", op: "empty" }], [2, 4]],
    ["select eq", [{ column: "tier", op: "eq", value: "pro" }], [0]],
    [
      "every condition must hold",
      [
        { column: "name", op: "contains", value: "acme" },
        { column: "n", op: "lt", value: 5 },
      ],
      [1],
    ],
  ];
  it.each(cases)("%s", async (_, where, expected) => {
    expect(await matching(t, where)).toEqual(expected);
  });

  it("a cell condition matches the group's status, and null matches rows with no cell", async () => {
    await startRun(
      { db: db(), backend: new RecordingBackend() },
      {
        tableId: t.tableId,
        groupIds: ["g"],
        mode: "all",
        rowIds: [t.ids[1] as string, t.ids[3] as string],
        limit: null,
        window: 1,
      },
    );
    expect(await matching(t, [{ group: "g", status: "queued" }])).toEqual([1, 3]);
    expect(await matching(t, [{ group: "g", status: null }])).toEqual([0, 2, 4, 5]);
    expect(await matching(t, [{ group: "h", status: "queued" }])).toEqual([]);
    expect(
      await matching(t, [
        { group: "g", status: "queued" },
        { column: "n", op: "eq", value: 10 },
      ]),
    ).toEqual([3]);
  });
});

describe("where: bad conditions are 400s", () => {
  let tableId: string;
  beforeAll(async () => {
    tableId = (await table([{}])).tableId;
  });
  const bad: [string, Schemas["WhereCondition"][], string][] = [
    ["an unknown column", [{ column: "nope", op: "eq", value: 1 }], "where.0.column"],
    ["an unknown group", [{ group: "nope", status: "error" }], "where.0.group"],
    ["gt on text", [{ column: "name", op: "gt", value: "a" }], "where.0.op"],
    ["contains on a number", [{ column: "n", op: "contains", value: 1 }], "where.0.op"],
    ["contains on a boolean", [{ column: "ok", op: "contains", value: true }], "where.0.op"],
    ["a value of the wrong type", [{ column: "n", op: "eq", value: "10" }], "where.0.value"],
    ["a malformed date", [{ column: "day", op: "gte", value: "yesterday" }], "where.0.value"],
    ["an option the select lacks", [{ column: "tier", op: "eq", value: "gold" }], "where.0.value"],
    ["eq without a value", [{ column: "name", op: "eq" }], "where.0.value"],
    ["empty with a value", [{ column: "name", op: "empty", value: "" }], "where.0.value"],
  ];
  it.each(bad)("POST /runs with %s", async (_, where, path) => {
    const res = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", where },
    });
    expect(res.response.status).toBe(400);
    expect(res.error?.error.issues?.map((i) => i.path)).toContain(path);
  });
  it("runs/cancel checks its where the same way", async () => {
    const res = await apiClient(key).POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id: tableId } },
      body: { where: [{ column: "nope", op: "empty" }] },
    });
    expect(res.response.status).toBe(400);
    // An operator the API does not know is a wrong shape: the typed client cannot send it.
    const unknownOp = await call("POST", `/api/tables/${tableId}/runs`, {
      key,
      body: { mode: "all", where: [{ column: "n", op: "like", value: 1 }] },
    });
    expect(unknownOp.status).toBe(400);
  });
});

/** The rows (insert indexes) with a cell of `group` in `status`. */
async function cellsIn(
  t: { tableId: string; ids: string[] },
  group: string,
  status: string,
): Promise<number[]> {
  const rows = await queryRows<{ rowId: string }>(
    db(),
    sql`select row_id as "rowId" from cells
         where table_id = ${t.tableId} and group_id = ${group} and status = ${status}::cell_status`,
  );
  return rows.map((r) => t.ids.indexOf(r.rowId)).sort((a, b) => a - b);
}

describe("where: runs and Stops", () => {
  const ROWS = 50;
  const even = (i: number) => i % 2 === 0;
  const data = (i: number) => ({ n: i, name: even(i) ? "even" : "odd" });
  const range = (f: (i: number) => boolean) => Array.from({ length: ROWS }, (_, i) => i).filter(f);

  it("a run stamps exactly the matching rows, on its background pages too, as its dry run said", async () => {
    const t = await table(Array.from({ length: ROWS }, (_, i) => data(i)));
    const where: Where = [
      { column: "name", op: "eq", value: "even" },
      { column: "n", op: "gte", value: 10 },
    ];
    const dry = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.tableId } },
      body: { mode: "all", groupIds: ["g"], where, dryRun: true },
    });
    expect(dry.response.status).toBe(200);
    const backend = new RecordingBackend();
    const run = await startRun(
      { db: db(), backend },
      {
        tableId: t.tableId,
        groupIds: ["g"],
        mode: "all",
        rowIds: null,
        where: typed(t.schema, where),
        limit: null,
        window: 1,
        pageRows: 4,
        syncRows: 4,
      },
    );
    expect(run.stamping).toBe(true);
    for (const job of backend.take())
      if (job.task === TASKS.stamper)
        await runStamper({ database: getDatabase(), backend }, job.payload, taskContext(), {
          pageRows: 4,
        });
    const expected = range((i) => even(i) && i >= 10);
    expect(await cellsIn(t, "g", "queued")).toEqual(expected);
    expect(dataOf(dry)).toMatchObject({ rows: expected.length, cells: expected.length });
  });

  it("the API's run takes where with limit and rowIds", async () => {
    const t = await table(Array.from({ length: ROWS }, (_, i) => data(i)));
    const res = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.tableId } },
      body: {
        mode: "incomplete",
        groupIds: ["h"],
        rowIds: t.ids.slice(0, 20),
        where: [{ column: "name", op: "eq", value: "odd" }],
        limit: 3,
      },
    });
    expect(res.response.status).toBe(202);
    expect(await cellsIn(t, "h", "queued")).toEqual([1, 3, 5]);
  });

  it("a Stop with a where cancels only the matching rows' cells, and a run's later pages skip them", async () => {
    const t = await table(Array.from({ length: ROWS }, (_, i) => data(i)));
    const backend = new RecordingBackend();
    await startRun(
      { db: db(), backend },
      {
        tableId: t.tableId,
        groupIds: ["g", "h"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 1,
        pageRows: 4,
        syncRows: 8,
      },
    );
    // Rows 0–7 are stamped; the Stop covers the even rows below 20 (and only group g).
    const stop = await apiClient(key).POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id: t.tableId } },
      body: {
        groupIds: ["g"],
        where: [
          { column: "name", op: "eq", value: "even" },
          { column: "n", op: "lt", value: 20 },
        ],
      },
    });
    expect(stop.response.status).toBe(200);
    expect(dataOf(stop).cancelled).toBe(4);
    for (const job of backend.take())
      if (job.task === TASKS.stamper)
        await runStamper({ database: getDatabase(), backend }, job.payload, taskContext(), {
          pageRows: 4,
        });
    const stopped = range((i) => even(i) && i < 20);
    expect(await cellsIn(t, "g", "cancelled")).toEqual([0, 2, 4, 6]);
    expect(await cellsIn(t, "g", "queued")).toEqual(range((i) => !stopped.includes(i)));
    // Group h was not in the Stop: every row of it is stamped.
    expect(await cellsIn(t, "h", "queued")).toEqual(range(() => true));
  });

  it("a Stop's where on cell status covers what a page in progress stamped", async () => {
    const t = await table(Array.from({ length: 6 }, (_, i) => data(i)));
    const backend = new RecordingBackend();
    await startRun(
      { db: db(), backend },
      {
        tableId: t.tableId,
        groupIds: ["g"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 1,
      },
    );
    const res = await stopRuns(
      { db: db(), backend },
      {
        tableId: t.tableId,
        where: typed(t.schema, [{ group: "g", status: "queued" }]),
      },
    );
    expect(res.cancelled).toBe(6);
    expect(await cellsIn(t, "g", "cancelled")).toEqual([0, 1, 2, 3, 4, 5]);
    const [recorded] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from stop_ranges sr join stops s on s.seq = sr.seq
            join rows r on r.table_id = s.table_id and r.position between sr.lo and sr.hi
           where s.table_id = ${t.tableId} and s.matched`,
    );
    expect(recorded?.n).toBe(6);
  });
});

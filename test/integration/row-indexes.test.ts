/**
 * Row indexes (services/row-indexes.ts) on real Postgres, with a threshold of 200 rows: a
 * sort or filter on a big-enough table records the index that serves it, once however
 * many reads ask at once; the job builds it once; the planner can then serve the read
 * with it (the literal table id and expression match the partial index) and the pages,
 * forward and backward, are the rows a sort gives; a table holds at most five; a deleted
 * column's and a deleted table's indexes are dropped.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { log } from "@/config/log";
import type { Where } from "@/contracts/where";
import type { TypedCondition } from "@/domain/where";
import { maintainRowIndexes } from "@/services/row-indexes";
import { findRowsSql } from "@/store/rows/find";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { typedTable } from "../helpers/tables";

const db = () => getDatabase().db;
let key: string;
const before = process.env.CELLFLOW_ROW_INDEX_MIN_ROWS;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
  process.env.CELLFLOW_ROW_INDEX_MIN_ROWS = "200";
});
afterAll(() => {
  if (before === undefined) delete process.env.CELLFLOW_ROW_INDEX_MIN_ROWS;
  else process.env.CELLFLOW_ROW_INDEX_MIN_ROWS = before;
});

const ROWS = 300;
/** Duplicates, nulls and mistyped values, so ties and null keys cross page boundaries. */
const rowData = (i: number): Record<string, unknown> => ({
  ...(i % 11 === 0 ? {} : { n: (i * 37) % 50 }),
  ...(i % 13 === 0 ? {} : { name: `w${((i * 7919) % 1000).toString(16)}x` }),
  day: `2024-01-${String((i % 28) + 1).padStart(2, "0")}`,
});
const bigTable = (name: string, rows = ROWS) =>
  typedTable(
    key,
    name,
    Array.from({ length: rows }, (_, i) => rowData(i)),
  );

interface Q {
  orderBy?: string;
  dir?: "asc" | "desc";
  where?: Where;
  cursor?: string;
  before?: string;
  from?: "end";
  limit?: number;
}
async function page(tableId: string, q: Q) {
  const { where, ...rest } = q;
  return dataOf(
    await apiClient(key).GET("/api/tables/{id}/rows", {
      params: {
        path: { id: tableId },
        query: { limit: 23, ...rest, ...(where ? { where } : {}) },
      },
    }),
  );
}
async function walk(tableId: string, q: Q): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const p = await page(tableId, { ...q, ...(cursor ? { cursor } : {}) });
    ids.push(...p.rows.map((r) => r.id));
    if (!p.nextCursor) return ids;
    cursor = p.nextCursor;
  }
}
async function walkBack(tableId: string, q: Q): Promise<string[]> {
  const ids: string[] = [];
  let p = await page(tableId, { ...q, from: "end" });
  for (;;) {
    ids.unshift(...p.rows.map((r) => r.id));
    if (!p.prevCursor) return ids;
    p = await page(tableId, { ...q, before: p.prevCursor });
  }
}

interface Recorded {
  name: string;
  column: string;
  kind: string;
  status: string;
}
const recorded = (tableId: string) =>
  queryRows<Recorded>(
    db(),
    sql`select index_name as name, column_id as column, kind, status from row_indexes
         where table_id = ${tableId} order by column_id, kind`,
  );
const built = async (name: string) =>
  (
    await queryRows<{ valid: boolean }>(
      db(),
      sql`select i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid
           where c.relname = ${name}`,
    )
  )[0]?.valid ?? null;
const maintain = () => maintainRowIndexes(getDatabase(), log());

/** The plan of `query` where scans and sorts of the whole table are priced out. */
async function planOf(query: ReturnType<typeof sql>): Promise<string> {
  return db().transaction(async (tx) => {
    await tx.execute(sql`set local enable_seqscan = off`);
    await tx.execute(sql`set local enable_sort = off`);
    const rows = await queryRows<{ "QUERY PLAN": string }>(tx, sql`explain ${query}`);
    return rows.map((r) => r["QUERY PLAN"]).join("\n");
  });
}

describe("row indexes", () => {
  it("a sort on a big-enough table records its index, built once, and the read pages through it as it sorted", async () => {
    const t = await bigTable("sorted");
    const small = await bigTable("small", 20);
    const scanned = {
      asc: await walk(t.tableId, { orderBy: "n" }),
      desc: await walk(t.tableId, { orderBy: "n", dir: "desc" }),
      name: await walk(t.tableId, { orderBy: "name" }),
    };
    await page(small.tableId, { orderBy: "n" });
    expect(await recorded(small.tableId)).toEqual([]);
    const asked = await recorded(t.tableId);
    expect(asked.map((r) => [r.column, r.kind, r.status])).toEqual([
      ["n", "sort_asc", "pending"],
      ["n", "sort_desc", "pending"],
      ["name", "sort_asc", "pending"],
    ]);
    // Two jobs at once (two workers): each index is built by one of them.
    const [a, b] = await Promise.all([maintain(), maintain()]);
    expect(a.built + b.built).toBe(3);
    for (const r of await recorded(t.tableId)) {
      expect(r.status).toBe("ready");
      expect(await built(r.name)).toBe(true);
    }
    expect(await walk(t.tableId, { orderBy: "n" })).toEqual(scanned.asc);
    expect(await walk(t.tableId, { orderBy: "n", dir: "desc" })).toEqual(scanned.desc);
    expect(await walk(t.tableId, { orderBy: "name" })).toEqual(scanned.name);
    expect(await walkBack(t.tableId, { orderBy: "n" })).toEqual(scanned.asc);
    expect(await walkBack(t.tableId, { orderBy: "n", dir: "desc" })).toEqual(scanned.desc);

    const [asc, desc] = asked;
    for (const [dir, ix] of [
      ["asc", asc],
      ["desc", desc],
    ] as const) {
      const plan = await planOf(
        findRowsSql(t.tableId, {
          where: [],
          order: { column: { id: "n", type: "number" }, dir },
          after: null,
          limit: 50,
          indexedOrder: true,
        }),
      );
      expect(plan).toContain(ix?.name);
      expect(plan).not.toMatch(/Seq Scan on rows/);
    }
  });

  it("filters record a btree (ranges) or a trigram index (contains) that serves their count", async () => {
    const t = await bigTable("filtered");
    // Statistics of the table, as a real one of this size would have them.
    await db().execute(sql`analyze rows`);
    const { whereSql } = await import("@/store/rows/where-sql");
    const countPlan = (c: TypedCondition) =>
      planOf(
        sql`select count(*) from rows r where r.table_id = ${sql.raw(`'${t.tableId}'`)}
             and ${whereSql([c], { indexable: true })}`,
      );
    // Contains first, alone: no other index of the table can stand in for it in the plan.
    const contains: Where = [{ column: "name", op: "contains", value: "A_" }];
    const like: Where = [{ column: "name", op: "contains", value: "397" }];
    const textBefore = [
      await walk(t.tableId, { where: contains }),
      await walk(t.tableId, { where: like }),
    ];
    expect(textBefore[0]).toEqual([]);
    expect(textBefore[1]?.length).toBeGreaterThan(0);
    await maintain();
    const [trgm] = await recorded(t.tableId);
    expect([trgm?.column, trgm?.kind, trgm?.status]).toEqual(["name", "trgm", "ready"]);
    expect([
      await walk(t.tableId, { where: contains }),
      await walk(t.tableId, { where: like }),
    ]).toEqual(textBefore);
    expect(
      await countPlan({ column: "name", type: "text", op: "contains", value: "397" }),
    ).toContain(trgm?.name);

    const lt: Where = [{ column: "n", op: "lt", value: 5 }];
    const ltBefore = await walk(t.tableId, { where: lt });
    await maintain();
    const btree = (await recorded(t.tableId)).find((r) => r.column === "n");
    expect([btree?.kind, btree?.status]).toEqual(["sort_asc", "ready"]);
    expect(await walk(t.tableId, { where: lt })).toEqual(ltBefore);
    expect(await countPlan({ column: "n", type: "number", op: "lt", value: 5 })).toContain(
      btree?.name,
    );
  });

  it("a table holds at most five; a deleted column's and a deleted table's indexes are dropped", async () => {
    const t = await bigTable("capped");
    for (const orderBy of ["name", "n", "day", "tier"])
      for (const dir of ["asc", "desc"] as const) await page(t.tableId, { orderBy, dir });
    const asked = await recorded(t.tableId);
    expect(asked).toHaveLength(5);
    await maintain();
    const api = apiClient(key);
    const columns = t.schema.columns.filter((c) => c.id !== "name");
    dataOf(
      await api.PATCH("/api/tables/{id}", {
        params: { path: { id: t.tableId } },
        body: { columns, groups: t.schema.groups },
      }),
    );
    await maintain();
    const left = await recorded(t.tableId);
    expect(left.map((r) => r.column)).not.toContain("name");
    expect(left.length).toBeLessThan(5);
    for (const gone of asked.filter((r) => r.column === "name"))
      expect(await built(gone.name)).toBeNull();
    // A slot freed: the next ask gets one.
    await page(t.tableId, { orderBy: "tier", dir: "desc" });
    expect((await recorded(t.tableId)).length).toBe(left.length + 1);

    const res = await api.DELETE("/api/tables/{id}", { params: { path: { id: t.tableId } } });
    expect(res.response.status).toBe(204);
    await maintain();
    expect(await recorded(t.tableId)).toEqual([]);
    for (const r of asked) expect(await built(r.name)).toBeNull();
  });

  it("concurrent reads record each index once", async () => {
    const t = await bigTable("concurrent");
    await Promise.all(Array.from({ length: 6 }, () => page(t.tableId, { orderBy: "day" })));
    expect((await recorded(t.tableId)).map((r) => r.kind)).toEqual(["sort_asc"]);
  });

  it("one maintainer at a time builds the indexes of every table: two jobs at once neither deadlock nor fail a build", async () => {
    const a = await bigTable("first of two");
    const b = await bigTable("second of two");
    await page(a.tableId, { orderBy: "n" });
    await page(b.tableId, { orderBy: "n" });
    await page(b.tableId, { orderBy: "name", dir: "desc" });
    const [pending] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from row_indexes where status = 'pending'`,
    );
    expect(pending?.n).toBeGreaterThanOrEqual(3);
    const jobs = await Promise.all([maintain(), maintain(), maintain()]);
    // Whichever got the maintainer's lock built every pending one; the others did nothing.
    expect(jobs.map((j) => j.failed)).toEqual([0, 0, 0]);
    expect(jobs.reduce((n, j) => n + j.built, 0)).toBe(pending?.n);
    expect(jobs.filter((j) => j.busy === 1).length).toBe(jobs.filter((j) => j.built === 0).length);
    for (const r of [...(await recorded(a.tableId)), ...(await recorded(b.tableId))]) {
      expect(r.status).toBe("ready");
      expect(await built(r.name)).toBe(true);
    }
  });

  it("a build a dead maintainer left half done is taken over by the next one and ends ready", async () => {
    const t = await bigTable("taken over");
    await page(t.tableId, { orderBy: "day" });
    const [r] = await recorded(t.tableId);
    // As a maintainer that claimed it and died (its session, and so its lock, gone).
    await db().execute(
      sql`update row_indexes set status = 'building', started_at = now() where index_name = ${r?.name ?? ""}`,
    );
    expect((await maintain()).built).toBe(1);
    expect((await recorded(t.tableId)).map((x) => x.status)).toEqual(["ready"]);
    expect(await built(r?.name ?? "")).toBe(true);
  });
});

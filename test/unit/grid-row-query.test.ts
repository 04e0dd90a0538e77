/**
 * The grid's reads under a filter and a sort: a header click cycles asc → desc → off; a
 * page's request, sent by the UI's typed client, is read by the server as the filter
 * (the API's `where` JSON), the sort and the cursor it was built from; rows read sorted keep the
 * server's order across pages (the browser never re-sorts them), rows that arrive later
 * by event follow; under a filter an event's row is only updated when it is shown.
 */
import { describe, expect, it } from "vitest";
import { LIST_ROWS_JSON_PARAMS, ListRowsQuery } from "@/contracts/rows";
import type { WhereCondition } from "@/contracts/where";
import { parseQuery } from "@/http/body";
import { answer, browserClient } from "@/ui/api";
import { GridRows, type RowView } from "@/ui/grid/model";
import {
  describeCondition,
  describeRunIf,
  nextSort,
  type PagePlace,
  type RowQuery,
  rowsPageQuery,
  withCondition,
} from "@/ui/grid/row-query";
import { windowRead } from "@/ui/grid/row-window";

const row = (id: string, position: number, data: Record<string, unknown> = {}): RowView => ({
  id,
  position,
  data,
  cells: {},
});
const ids = (rows: GridRows) => rows.list().map((r) => r.id);

describe("the grid's row query", () => {
  it("a header click sorts ascending, then descending, then not at all; another column starts over", () => {
    const asc = nextSort(null, "n");
    expect(asc).toEqual({ columnId: "n", dir: "asc" });
    const desc = nextSort(asc, "n");
    expect(desc).toEqual({ columnId: "n", dir: "desc" });
    expect(nextSort(desc, "n")).toBeNull();
    expect(nextSort(desc, "name")).toEqual({ columnId: "name", dir: "asc" });
  });

  it("a page of rows asks for what the server reads: the filter as where JSON, the sort, the cursor", async () => {
    const where: WhereCondition[] = [
      { group: "enrich", status: "error" },
      { column: "name", op: "contains", value: "a&b=c" },
    ];
    const sent: Request[] = [];
    const client = browserClient({
      baseUrl: "http://cellflow.test",
      fetch: (req) => {
        sent.push(req);
        return Promise.resolve(Response.json({ rows: [], nextCursor: null }));
      },
    });
    const read = (query: RowQuery, place: PagePlace, limit: number, total = false) =>
      answer(
        client.GET("/api/tables/{id}/rows", {
          params: { path: { id: "tbl_1" }, query: rowsPageQuery(query, place, limit, { total }) },
        }),
      );
    await read({ where, sort: { columnId: "n", dir: "desc" } }, { after: "abc" }, 500);
    await read({ where: [], sort: null }, { at: "start" }, 10);
    await read({ where: [], sort: null }, { at: "end" }, 10, true);
    await read({ where: [], sort: null }, { before: "xyz" }, 10);
    await read({ where: [], sort: null }, { seek: 0.5 }, 10);
    const [filtered, plain, end, before, seek] = sent.map((r) => ({
      url: new URL(r.url),
      read: parseQuery(r, ListRowsQuery, LIST_ROWS_JSON_PARAMS),
    }));
    expect(filtered?.url.pathname).toBe("/api/tables/tbl_1/rows");
    expect(filtered?.read).toEqual({ where, orderBy: "n", dir: "desc", cursor: "abc", limit: 500 });
    expect([...(plain?.url.searchParams.keys() ?? [])]).toEqual(["limit"]);
    expect(plain?.read).toEqual({ limit: 10, dir: "asc" });
    expect(end?.read).toEqual({ limit: 10, dir: "asc", from: "end", total: true });
    expect(before?.read).toEqual({ limit: 10, dir: "asc", before: "xyz" });
    expect(seek?.read).toEqual({ limit: 10, dir: "asc", seek: 0.5 });
  });

  it("the same condition is not added twice", () => {
    const cond: WhereCondition = { column: "n", op: "gt", value: 1 };
    const once = withCondition([], cond);
    expect(withCondition(once, { ...cond })).toBe(once);
    expect(withCondition(once, { column: "n", op: "gt", value: 2 })).toHaveLength(2);
  });
});

const at = (rows: RowView[], prevCursor: string | null, nextCursor: string | null) => ({
  rows,
  prevCursor,
  nextCursor,
});

describe("rows in the browser: a window of pages", () => {
  it("pages keep the server's order, before and after the window; rows arriving later follow by position", () => {
    const rows = new GridRows();
    rows.reset(at([row("c", 2), row("a", 0)], "p1", null), null, { start: 500, total: 504 });
    // Holds the last row: it ends at the count.
    expect([rows.start, rows.atEnd]).toEqual([502, true]);
    rows.addPage(at([row("d", 3), row("b", 1)], null, "n0"), null, "start");
    expect(ids(rows)).toEqual(["d", "b", "c", "a"]);
    // Holds the first row as well: all of them, whatever the count said.
    expect([rows.start, rows.total, rows.atStart]).toEqual([0, 4, true]);
    // An edit read back does not move its row; a new row goes after the sorted ones.
    rows.upsert([row("a", 0, { n: 99 }), row("f", 5), row("e", 4)]);
    expect(ids(rows)).toEqual(["d", "b", "c", "a", "e", "f"]);
    rows.remove(["d"]);
    expect(ids(rows)).toEqual(["b", "c", "a", "e", "f"]);
  });

  it("dropping a page moves the window's start, or drops the rows after it", () => {
    const rows = new GridRows();
    rows.reset(at([row("a", 0), row("b", 1)], null, "n1"), null, { start: 0, total: 10 });
    rows.addPage(at([row("c", 2), row("d", 3)], "p2", "n3"), null, "end");
    rows.dropPage("start");
    expect([ids(rows), rows.start, rows.prevCursor, rows.nextCursor]).toEqual([
      ["c", "d"],
      2,
      "p2",
      "n3",
    ]);
    rows.addPage(at([row("e", 4)], "p4", null), null, "end");
    rows.upsert([row("z", 99)]);
    rows.dropPage("end");
    expect([ids(rows), rows.atEnd]).toEqual([["c", "d"], false]);
  });

  it("a deleted row held leaves the count once, however often it is told; a recount sets it", () => {
    const rows = new GridRows();
    rows.reset(at([row("a", 0), row("b", 1)], null, "n"), null, { start: 0, total: 100 });
    rows.remove(["a", "x"]);
    rows.remove(["a", "x"]);
    expect(rows.total).toBe(99);
    rows.counted(97);
    expect(rows.total).toBe(97);
  });

  it("under a filter an event's row is updated when shown and not added when not", () => {
    const rows = new GridRows();
    rows.reset(at([row("a", 0, { n: 1 })], null, null), null, { start: 0, total: 1 });
    rows.upsert([row("a", 0, { n: 2 }), row("z", 9)], { onlyShown: true });
    expect(ids(rows)).toEqual(["a"]);
    expect(rows.get("a")?.data).toEqual({ n: 2 });
  });
});

describe("which page the window reads next", () => {
  const w = (start: number, held: number, total: number, more = { before: true, after: true }) => ({
    start,
    held,
    total,
    atStart: !more.before,
    atEnd: !more.after,
    prevCursor: more.before ? "p" : null,
    nextCursor: more.after ? "n" : null,
  });
  it("none while the window covers the screen", () => {
    expect(
      windowRead(w(0, 500, 1_000_000, { before: false, after: true }), { first: 0, last: 30 }, 500),
    ).toBeNull();
    expect(
      windowRead(w(0, 20, 20, { before: false, after: false }), { first: 0, last: 30 }, 500),
    ).toBeNull();
  });
  it("the page next to the window by its cursor, just past either end", () => {
    expect(
      windowRead(
        w(0, 500, 1_000_000, { before: false, after: true }),
        { first: 470, last: 500 },
        500,
      ),
    ).toEqual({ kind: "extend", side: "end", place: { after: "n" } });
    expect(windowRead(w(5_000, 500, 1_000_000), { first: 4_990, last: 5_020 }, 500)).toEqual({
      kind: "extend",
      side: "start",
      place: { before: "p" },
    });
  });
  it("far away: the last page from the end, the first from the start, else a seek to the screen's fraction", () => {
    const far = w(0, 500, 1_000_000, { before: false, after: true });
    expect(windowRead(far, { first: 999_970, last: 999_999 }, 500)).toEqual({
      kind: "jump",
      place: { at: "end" },
      start: 999_500,
    });
    expect(windowRead(w(500_000, 500, 1_000_000), { first: 10, last: 40 }, 500)).toEqual({
      kind: "jump",
      place: { at: "start" },
      start: 0,
    });
    expect(windowRead(far, { first: 500_060, last: 500_090 }, 500)).toEqual({
      kind: "jump",
      place: { seek: 0.5 },
      start: 500_000,
    });
  });
});

describe("outcome conditions and run conditions, as people read them", () => {
  const t = {
    columns: [{ id: "tier", name: "Tier", type: "text" as const }],
    groups: [
      {
        id: "g",
        name: "Lookup",
        kind: "enrichment" as const,
        enrichmentId: "company_lookup",
        inputs: {},
        outputs: [],
        dependsOn: [],
        autoRun: false,
        runIf: [
          { column: "tier", op: "eq" as const, value: "pro" },
          { column: "tier", op: "not_empty" as const },
        ],
      },
    ],
  };
  it("names a group's outcome", () => {
    expect(describeCondition(t, { group: "g", outcome: "condition_not_met" })).toBe(
      "Lookup: condition not met",
    );
  });
  it("joins a group's run conditions, and has nothing to say without any", () => {
    expect(describeRunIf(t, t.groups[0] as (typeof t.groups)[number])).toBe(
      "Tier is “pro” and Tier is not empty",
    );
    expect(describeRunIf(t, {})).toBeNull();
  });
});

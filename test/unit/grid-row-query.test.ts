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
  type RowQuery,
  rowsPageQuery,
  withCondition,
} from "@/ui/grid/row-query";

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
    const read = (query: RowQuery, cursor: string | null, limit: number) =>
      answer(
        client.GET("/api/tables/{id}/rows", {
          params: { path: { id: "tbl_1" }, query: rowsPageQuery(query, cursor, limit) },
        }),
      );
    await read({ where, sort: { columnId: "n", dir: "desc" } }, "abc", 500);
    await read({ where: [], sort: null }, null, 10);
    const [filtered, plain] = sent.map((r) => ({
      url: new URL(r.url),
      read: parseQuery(r, ListRowsQuery, LIST_ROWS_JSON_PARAMS),
    }));
    expect(filtered?.url.pathname).toBe("/api/tables/tbl_1/rows");
    expect(filtered?.read).toEqual({ where, orderBy: "n", dir: "desc", cursor: "abc", limit: 500 });
    expect([...(plain?.url.searchParams.keys() ?? [])]).toEqual(["limit"]);
    expect(plain?.read).toEqual({ limit: 10, dir: "asc" });
  });

  it("the same condition is not added twice", () => {
    const cond: WhereCondition = { column: "n", op: "gt", value: 1 };
    const once = withCondition([], cond);
    expect(withCondition(once, { ...cond })).toBe(once);
    expect(withCondition(once, { column: "n", op: "gt", value: 2 })).toHaveLength(2);
  });
});

describe("rows in the browser under a sort and a filter", () => {
  it("rows read sorted keep the server's order across pages; rows arriving later follow by position", () => {
    const rows = new GridRows();
    rows.reset([row("c", 2), row("a", 0)], true);
    rows.appendPage([row("d", 3), row("b", 1)]);
    expect(ids(rows)).toEqual(["c", "a", "d", "b"]);
    // An edit read back does not move its row; a new row goes after the sorted ones.
    rows.upsert([row("a", 0, { n: 99 }), row("f", 5), row("e", 4)]);
    expect(ids(rows)).toEqual(["c", "a", "d", "b", "e", "f"]);
    rows.remove(["d"]);
    expect(ids(rows)).toEqual(["c", "a", "b", "e", "f"]);
  });

  it("rows read in position order stay sorted by position whatever order they arrive in", () => {
    const rows = new GridRows();
    rows.reset([row("b", 1)]);
    rows.appendPage([row("a", 0)]);
    rows.upsert([row("c", 2)]);
    expect(ids(rows)).toEqual(["a", "b", "c"]);
  });

  it("under a filter an event's row is updated when shown and not added when not", () => {
    const rows = new GridRows();
    rows.reset([row("a", 0, { n: 1 })]);
    rows.upsert([row("a", 0, { n: 2 }), row("z", 9)], { onlyShown: true });
    expect(ids(rows)).toEqual(["a"]);
    expect(rows.get("a")?.data).toEqual({ n: 2 });
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

/**
 * Saved views in the grid: a view opens as the filter bar (its conditions, sort and hidden
 * columns) and its rows are read through `?view=` while unedited, so the server applies it
 * and refuses one that no longer fits; any edit reads by the bar's own conditions and marks
 * the view edited; the bar saves back as the view's fields; the URL names the open view.
 */
import { describe, expect, it } from "vitest";
import { LIST_ROWS_JSON_PARAMS, ListRowsQuery } from "@/contracts/rows";
import type { SavedView } from "@/contracts/views";
import { parseQuery } from "@/http/body";
import { answer, browserClient } from "@/ui/api";
import { nextSort, rowsPageQuery } from "@/ui/grid/row-query";
import {
  createBody,
  edited,
  queryOfView,
  toggleHidden,
  urlWithView,
  viewEdited,
  viewFields,
} from "@/ui/grid/saved-views";

const VIEW: SavedView = {
  id: "view_1",
  tableId: "tbl_1",
  name: "Big ones",
  where: [{ column: "n", op: "gt", value: 2 }],
  orderBy: "name",
  dir: "desc",
  hiddenColumns: ["note"],
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
};

describe("saved views in the grid", () => {
  it("a view opens as the filter bar, read through ?view= only while unedited", () => {
    const open = queryOfView(VIEW);
    expect(open).toEqual({
      where: VIEW.where,
      sort: { columnId: "name", dir: "desc" },
      view: "view_1",
    });
    // The server applies the view: no where or orderBy of the bar's own is sent with it.
    expect(rowsPageQuery(open, "c1", 100)).toEqual({ limit: 100, view: "view_1", cursor: "c1" });
    expect(viewEdited(VIEW, open, VIEW.hiddenColumns)).toBe(false);

    // A header click is an edit: the bar's own where and order are read, the view is marked.
    const sorted = edited({ ...open, sort: nextSort(open.sort, "n") });
    expect(rowsPageQuery(sorted, null, 100)).toEqual({
      limit: 100,
      where: VIEW.where,
      orderBy: "n",
      dir: "asc",
    });
    expect(viewEdited(VIEW, sorted, VIEW.hiddenColumns)).toBe(true);
    // So is a column shown again, and hiding columns in another order is not.
    expect(viewEdited(VIEW, open, [])).toBe(true);
    expect(viewEdited({ ...VIEW, hiddenColumns: ["a", "b"] }, open, ["b", "a"])).toBe(false);
  });

  it("a view without conditions or sort opens as an empty bar; the direction of no sort is no edit", () => {
    const bare: SavedView = { ...VIEW, where: null, orderBy: null, dir: "desc", hiddenColumns: [] };
    const open = queryOfView(bare);
    expect(open).toEqual({ where: [], sort: null, view: "view_1" });
    expect(viewEdited(bare, edited(open), [])).toBe(false);
  });

  it("the filter bar saves as a view's fields: a create sends no empty where or null orderBy, a patch clears them", () => {
    const bar = { where: VIEW.where ?? [], sort: { columnId: "name", dir: "desc" as const } };
    expect(createBody("Big ones", viewFields(bar, ["note"]))).toEqual({
      name: "Big ones",
      where: VIEW.where,
      orderBy: "name",
      dir: "desc",
      hiddenColumns: ["note"],
    });
    const empty = viewFields({ where: [], sort: null }, []);
    expect(empty).toEqual({ where: null, orderBy: null, dir: "asc", hiddenColumns: [] });
    expect(createBody("All", empty)).toEqual({ name: "All", dir: "asc", hiddenColumns: [] });
  });

  it("a page read through a view is what the server reads as ?view=", async () => {
    const sent: Request[] = [];
    const client = browserClient({
      baseUrl: "http://cellflow.test",
      fetch: (req) => {
        sent.push(req);
        return Promise.resolve(Response.json({ rows: [], nextCursor: null }));
      },
    });
    await answer(
      client.GET("/api/tables/{id}/rows", {
        params: { path: { id: "tbl_1" }, query: rowsPageQuery(queryOfView(VIEW), null, 500) },
      }),
    );
    const [req] = sent;
    expect(req && parseQuery(req, ListRowsQuery, LIST_ROWS_JSON_PARAMS)).toEqual({
      limit: 500,
      view: "view_1",
      dir: "asc",
    });
  });

  it("the URL names the open view, and drops it when none is open", () => {
    const opened = urlWithView("http://app.test/tables/tbl_1?x=1", "view_1");
    expect(opened).toBe("http://app.test/tables/tbl_1?x=1&view=view_1");
    expect(urlWithView(urlWithView(opened, "view_2"), null)).toBe(
      "http://app.test/tables/tbl_1?x=1",
    );
  });

  it("a column's Hide hides it, and hiding it again (its chip's ✕) shows it", () => {
    expect(toggleHidden(["a"], "b")).toEqual(["a", "b"]);
    expect(toggleHidden(["a", "b"], "a")).toEqual(["b"]);
  });
});

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
import { NO_QUERY, nextSort, readKey, rowsPageQuery } from "@/ui/grid/row-query";
import {
  createBody,
  edited,
  fittedView,
  knownHidden,
  queryOfView,
  settled,
  toggleHidden,
  urlHiddenFilled,
  urlViewFilled,
  urlViewMissing,
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
      revision: VIEW.updatedAt,
    });
    // The server applies the view: no where or orderBy of the bar's own is sent with it.
    expect(rowsPageQuery(open, { after: "c1" }, 100)).toEqual({
      limit: 100,
      view: "view_1",
      cursor: "c1",
    });
    expect(viewEdited(VIEW, open, VIEW.hiddenColumns)).toBe(false);

    // A header click is an edit: the bar's own where and order are read, the view is marked.
    const sorted = edited({ ...open, sort: nextSort(open.sort, "n") });
    expect(rowsPageQuery(sorted, { at: "start" }, 100)).toEqual({
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
    expect(open).toEqual({ where: [], sort: null, view: "view_1", revision: VIEW.updatedAt });
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
        params: {
          path: { id: "tbl_1" },
          query: rowsPageQuery(queryOfView(VIEW), { at: "start" }, 500),
        },
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
  it("a URL naming a view its list does not have closes it: all rows are read, not the missing view", () => {
    const fromUrl = { ...NO_QUERY, view: "view_gone" };
    const closed = urlViewMissing(fromUrl, "view_gone");
    expect(rowsPageQuery(closed, { at: "start" }, 100)).toEqual({ limit: 100 });
    // An edit made before the list came is kept as it is.
    const bar = edited({ where: VIEW.where ?? [], sort: null });
    expect(urlViewMissing(bar, "view_gone")).toBe(bar);
  });

  it("the URL's view fills the bar once its list is read, unless edited meanwhile, and its rows are not read twice", () => {
    const fromUrl = { ...NO_QUERY, view: VIEW.id };
    const filled = urlViewFilled(fromUrl, VIEW);
    expect(filled).toEqual({
      where: VIEW.where,
      sort: { columnId: "name", dir: "desc" },
      view: VIEW.id,
    });
    expect(readKey(filled, 100)).toBe(readKey(fromUrl, 100));
    expect(viewEdited(VIEW, filled, VIEW.hiddenColumns)).toBe(false);
    // A header click before the list came: the click stays.
    const clicked = edited({ ...fromUrl, sort: nextSort(null, "n") });
    expect(urlViewFilled(clicked, VIEW)).toBe(clicked);
    // Hidden columns: the view's, unless some were hidden before the list came.
    expect(urlHiddenFilled([], VIEW)).toEqual(["note"]);
    const mine = ["name"];
    expect(urlHiddenFilled(mine, VIEW)).toBe(mine);
  });

  it("a view saved again reads its rows again, though ?view= is the same", () => {
    const before = queryOfView(VIEW);
    const after = queryOfView({ ...VIEW, updatedAt: "2026-01-02T00:00:00.000Z" });
    expect(rowsPageQuery(after, { at: "start" }, 100)).toEqual(
      rowsPageQuery(before, { at: "start" }, 100),
    );
    expect(readKey(after, 100)).not.toBe(readKey(before, 100));
  });

  it("hidden columns the table no longer has are dropped: the view is not edited for them, and is saved without them", () => {
    const columns = [{ id: "name" }, { id: "n" }];
    const stale: SavedView = { ...VIEW, hiddenColumns: ["note", "n"] };
    const fitted = fittedView(stale, columns);
    expect(fitted.hiddenColumns).toEqual(["n"]);
    expect(fittedView(stale, null)).toBe(stale);
    const shown = knownHidden(stale.hiddenColumns, columns);
    expect(viewEdited(fitted, queryOfView(stale), shown)).toBe(false);
    expect(viewFields(queryOfView(stale), shown).hiddenColumns).toEqual(["n"]);
  });

  it("an answer that comes after an await does not undo a change made meanwhile", () => {
    const atClick = edited({ where: VIEW.where ?? [], sort: null });
    const saved = queryOfView(VIEW);
    expect(settled(atClick, atClick, saved)).toBe(saved);
    const later = edited({ ...atClick, sort: nextSort(null, "n") });
    expect(settled(later, atClick, saved)).toBe(later);
  });
});

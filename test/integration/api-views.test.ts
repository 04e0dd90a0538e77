/**
 * Saved views (API.md "Schedules, destinations, views"): they round-trip, a table holds at
 * most 100 even under concurrent creates, `GET /rows?view=` reads the rows the equivalent
 * where/orderBy reads, and a view naming a column the table lost, or whose type no longer
 * takes its condition, reads as 409 naming it.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import type { Schemas } from "@/client/cellflow-client";
import { type CreateViewRequest, MAX_VIEWS_PER_TABLE } from "@/contracts/views";
import type { Where } from "@/contracts/where";
import { insertView, type NewView, type ViewCreated } from "@/store/views/create";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";

type Column = NonNullable<Schemas["CreateTableRequest"]["columns"]>[number];
type ViewBody = z.input<typeof CreateViewRequest>;
interface RowsQuery {
  view?: string;
  where?: Where;
  orderBy?: string;
  dir?: "asc" | "desc";
  limit?: number;
  cursor?: string;
}
const COLUMNS: Column[] = [
  { id: "name", name: "Name", type: "text" },
  { id: "n", name: "N", type: "number" },
  { id: "note", name: "Note", type: "text" },
];

let key: string;
beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
});

async function newTable(k = key): Promise<string> {
  const t = await apiClient(k).POST("/api/tables", { body: { name: "Views", columns: COLUMNS } });
  return dataOf(t).id;
}

async function insert(tableId: string, rows: Record<string, unknown>[]): Promise<void> {
  const res = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: { rows: rows.map((data) => ({ data })) },
  });
  expect(res.response.status).toBe(201);
}

function createView(tableId: string, body: ViewBody, k = key) {
  return apiClient(k).POST("/api/tables/{id}/views", { params: { path: { id: tableId } }, body });
}

function rows(tableId: string, query: RowsQuery, k = key) {
  return apiClient(k).GET("/api/tables/{id}/rows", {
    params: { path: { id: tableId }, query },
  });
}

const ids = (page: { rows: { id: string }[] }) => page.rows.map((r) => r.id);

describe("saved views", () => {
  it("round-trips: create, list, patch (null clears), delete", async () => {
    const tableId = await newTable();
    const created = await createView(tableId, {
      name: "Big ones",
      where: [{ column: "n", op: "gt", value: 2 }],
      orderBy: "name",
      dir: "desc",
      hiddenColumns: ["note"],
    });
    expect(created.response.status).toBe(201);
    const view = dataOf(created);
    expect(view).toMatchObject({
      tableId,
      name: "Big ones",
      where: [{ column: "n", op: "gt", value: 2 }],
      orderBy: "name",
      dir: "desc",
      hiddenColumns: ["note"],
    });

    const list = await apiClient(key).GET("/api/tables/{id}/views", {
      params: { path: { id: tableId } },
    });
    expect(dataOf(list).views).toEqual([view]);

    const patched = await apiClient(key).PATCH("/api/tables/{id}/views/{viewId}", {
      params: { path: { id: tableId, viewId: view.id } },
      body: { name: "All", where: null, orderBy: null },
    });
    expect(dataOf(patched)).toMatchObject({
      id: view.id,
      name: "All",
      where: null,
      orderBy: null,
      // The direction of no order is stored as "asc" (see the dir test below).
      dir: "asc",
      hiddenColumns: ["note"],
    });

    const del = () =>
      apiClient(key).DELETE("/api/tables/{id}/views/{viewId}", {
        params: { path: { id: tableId, viewId: view.id } },
      });
    expect((await del()).response.status).toBe(204);
    expect((await del()).response.status).toBe(404);
    const after = await apiClient(key).GET("/api/tables/{id}/views", {
      params: { path: { id: tableId } },
    });
    expect(dataOf(after).views).toEqual([]);
  });

  it("a view naming a column, group or operator the table does not take is refused (400)", async () => {
    const tableId = await newTable();
    for (const body of [
      { name: "x", where: [{ column: "nope", op: "eq" as const, value: 1 }] },
      { name: "x", where: [{ column: "name", op: "gt" as const, value: "a" }] },
      { name: "x", where: [{ group: "nope", status: null }] },
      { name: "x", orderBy: "nope" },
      { name: "x", hiddenColumns: ["nope"] },
    ])
      expect((await createView(tableId, body)).response.status, JSON.stringify(body)).toBe(400);
    const patched = await apiClient(key).PATCH("/api/tables/{id}/views/{viewId}", {
      params: {
        path: { id: tableId, viewId: dataOf(await createView(tableId, { name: "ok" })).id },
      },
      body: { orderBy: "nope" },
    });
    expect(patched.response.status).toBe(400);
  });

  it("a table never holds more than 100 views, also when a create runs while another at 99 has not committed", async () => {
    const tableId = await newTable();
    for (let i = 0; i < MAX_VIEWS_PER_TABLE - 1; i += 11)
      await Promise.all(
        Array.from({ length: Math.min(11, MAX_VIEWS_PER_TABLE - 1 - i) }, (_, j) =>
          createView(tableId, { name: `v${i + j}` }).then((r) =>
            expect(r.response.status).toBe(201),
          ),
        ),
      );
    const count = async () =>
      dataOf(
        await apiClient(key).GET("/api/tables/{id}/views", { params: { path: { id: tableId } } }),
      ).views;
    expect(await count()).toHaveLength(MAX_VIEWS_PER_TABLE - 1);
    const [table] = await queryRows<{ workspace_id: string }>(
      getDatabase().db,
      sql`select workspace_id from tables where id = ${tableId}`,
    );
    const view = (id: string): NewView => ({
      id,
      workspaceId: table?.workspace_id ?? "",
      tableId,
      name: id,
      where: null,
      orderBy: null,
      dir: "asc",
      hiddenColumns: [],
    });
    // The 100th create is in its transaction, not committed, when the 101st starts: the
    // 101st must wait for it (the table-row lock) and then count 100. Without the lock it
    // counts 99 on its snapshot and inserts: 101.
    let second: Promise<ViewCreated> | undefined;
    const first = await getDatabase().db.transaction(async (tx) => {
      const made = await insertView(tx, view("view_race_a"));
      second = insertView(getDatabase().db, view("view_race_b"));
      const settled = second.then(() => true);
      await waitFor(
        async () =>
          (await Promise.race([settled, Promise.resolve(false)])) ||
          (
            await queryRows<{ n: number }>(
              getDatabase().db,
              sql`select count(*)::int as n from pg_stat_activity
                   where datname = current_database() and wait_event_type = 'Lock'`,
            )
          )[0]?.n === 1,
        10_000,
        20,
      );
      return made;
    });
    expect(first.ok).toBe(true);
    expect(await second).toEqual({ ok: false, reason: "limit_reached" });
    expect(await count()).toHaveLength(MAX_VIEWS_PER_TABLE);
    const over = await createView(tableId, { name: "one too many" });
    expect(over.response.status).toBe(409);
    expect(JSON.stringify(over.error)).toContain(String(MAX_VIEWS_PER_TABLE));
    await apiClient(key).DELETE("/api/tables/{id}/views/{viewId}", {
      params: { path: { id: tableId, viewId: "view_race_a" } },
    });
    expect(await count()).toHaveLength(MAX_VIEWS_PER_TABLE - 1);
    // Another table's views do not count against this one.
    expect((await createView(await newTable(), { name: "elsewhere" })).response.status).toBe(201);
  });

  it("rows?view= reads the same rows as the equivalent where/orderBy; a where given too narrows it, an orderBy given too wins", async () => {
    const tableId = await newTable();
    await insert(
      tableId,
      Array.from({ length: 12 }, (_, i) => ({ name: `r${String(i).padStart(2, "0")}`, n: i % 5 })),
    );
    const where = [{ column: "n", op: "gte" as const, value: 2 }];
    const view = dataOf(
      await createView(tableId, { name: "v", where, orderBy: "name", dir: "desc" }),
    );
    const direct = dataOf(await rows(tableId, { where, orderBy: "name", dir: "desc" }));
    const viewed = dataOf(await rows(tableId, { view: view.id }));
    expect(direct.rows.length).toBeGreaterThan(0);
    expect(ids(viewed)).toEqual(ids(direct));

    // Paged with the view's cursor: the same rows, in the same order.
    const first = dataOf(await rows(tableId, { view: view.id, limit: 3 }));
    const paged = [...ids(first)];
    let cursor = first.nextCursor;
    while (cursor) {
      const next = dataOf(await rows(tableId, { view: view.id, limit: 3, cursor }));
      paged.push(...ids(next));
      cursor = next.nextCursor;
    }
    expect(paged).toEqual(ids(direct));

    const extra = [{ column: "n", op: "lt" as const, value: 4 }];
    const narrowed = dataOf(await rows(tableId, { view: view.id, where: extra }));
    const both = dataOf(
      await rows(tableId, { where: [...where, ...extra], orderBy: "name", dir: "desc" }),
    );
    expect(ids(narrowed)).toEqual(ids(both));

    const reordered = dataOf(await rows(tableId, { view: view.id, orderBy: "n", dir: "asc" }));
    const byN = dataOf(await rows(tableId, { where, orderBy: "n", dir: "asc" }));
    expect(ids(reordered)).toEqual(ids(byN));
  });

  it("an unknown view is 404, and so is another workspace's (on its table or on this one)", async () => {
    const tableId = await newTable();
    expect((await rows(tableId, { view: "view_nope" })).response.status).toBe(404);

    const other = (await newWorkspace("other")).key;
    const otherTable = await newTable(other);
    const theirs = dataOf(await createView(otherTable, { name: "theirs" }, other));
    expect((await rows(tableId, { view: theirs.id })).response.status).toBe(404);
    expect((await rows(otherTable, { view: theirs.id })).response.status).toBe(404);
    for (const id of [tableId, otherTable]) {
      const patched = await apiClient(key).PATCH("/api/tables/{id}/views/{viewId}", {
        params: { path: { id, viewId: theirs.id } },
        body: { name: "mine now" },
      });
      expect(patched.response.status).toBe(404);
      const deleted = await apiClient(key).DELETE("/api/tables/{id}/views/{viewId}", {
        params: { path: { id, viewId: theirs.id } },
      });
      expect(deleted.response.status).toBe(404);
    }
    const list = await apiClient(key).GET("/api/tables/{id}/views", {
      params: { path: { id: otherTable } },
    });
    expect(list.response.status).toBe(404);
    // Untouched in its own workspace.
    const still = await apiClient(other).GET("/api/tables/{id}/views", {
      params: { path: { id: otherTable } },
    });
    expect(dataOf(still).views).toEqual([theirs]);

    // A view of another table of the same workspace does not apply here either.
    const sibling = dataOf(await createView(await newTable(), { name: "sibling" }));
    expect((await rows(tableId, { view: sibling.id })).response.status).toBe(404);
  });

  for (const [what, body] of [
    ["its where", { name: "by note", where: [{ column: "note", op: "not_empty" }] }],
    ["its orderBy", { name: "by note", orderBy: "note" }],
  ] satisfies [string, ViewBody][])
    it(`a view whose column was deleted since (in ${what}) reads as 409 naming the column`, async () => {
      const tableId = await newTable();
      await insert(tableId, [{ name: "a", n: 1, note: "x" }]);
      const view = dataOf(await createView(tableId, body));
      expect((await rows(tableId, { view: view.id })).response.status).toBe(200);

      const dropped = await apiClient(key).PATCH("/api/tables/{id}", {
        params: { path: { id: tableId } },
        body: { columns: COLUMNS.filter((c) => c.id !== "note") },
      });
      expect(dropped.response.status).toBe(200);
      const read = await rows(tableId, { view: view.id });
      expect(read.response.status).toBe(409);
      expect(read.error).toMatchObject({ error: { code: "conflict" } });
      expect(JSON.stringify(read.error)).toContain('column \\"note\\"');
      // The view itself is still listed, to be fixed or deleted.
      const fixed = await apiClient(key).PATCH("/api/tables/{id}/views/{viewId}", {
        params: { path: { id: tableId, viewId: view.id } },
        body: { where: null, orderBy: null, hiddenColumns: [] },
      });
      expect(fixed.response.status).toBe(200);
      expect((await rows(tableId, { view: view.id })).response.status).toBe(200);
    });
  it("a view whose hidden column was deleted since still reads its rows: hiding does not change them", async () => {
    const tableId = await newTable();
    await insert(tableId, [{ name: "a", n: 1, note: "x" }]);
    const view = dataOf(
      await createView(tableId, { name: "n only", orderBy: "n", hiddenColumns: ["note"] }),
    );
    const dropped = await apiClient(key).PATCH("/api/tables/{id}", {
      params: { path: { id: tableId } },
      body: { columns: COLUMNS.filter((c) => c.id !== "note") },
    });
    expect(dropped.response.status).toBe(200);
    const read = await rows(tableId, { view: view.id });
    expect(read.response.status).toBe(200);
    expect(ids(dataOf(read))).toHaveLength(1);
  });

  it("a view without an order stores dir asc (on create and on every patch), so it reads the rows in position order", async () => {
    const tableId = await newTable();
    await insert(tableId, [{ name: "b" }, { name: "a" }, { name: "c" }]);
    const inPosition = ids(dataOf(await rows(tableId, {})));
    const patch = (viewId: string, body: Record<string, unknown>) =>
      apiClient(key).PATCH("/api/tables/{id}/views/{viewId}", {
        params: { path: { id: tableId, viewId } },
        body,
      });

    const bare = dataOf(await createView(tableId, { name: "bare", dir: "desc" }));
    expect(bare.dir).toBe("asc");
    expect(ids(dataOf(await rows(tableId, { view: bare.id })))).toEqual(inPosition);
    // A dir alone, on a view without an order: still no direction.
    expect(dataOf(await patch(bare.id, { dir: "desc" })).dir).toBe("asc");

    const sorted = dataOf(await createView(tableId, { name: "s", orderBy: "name", dir: "desc" }));
    expect(sorted.dir).toBe("desc");
    expect(dataOf(await patch(sorted.id, { dir: "asc" })).dir).toBe("asc");
    expect(dataOf(await patch(sorted.id, { dir: "desc" })).dir).toBe("desc");
    // The order cleared: its direction goes with it, with or without a dir sent.
    const cleared = dataOf(await patch(sorted.id, { orderBy: null }));
    expect(cleared).toMatchObject({ orderBy: null, dir: "asc" });
    expect(ids(dataOf(await rows(tableId, { view: sorted.id })))).toEqual(inPosition);
    const again = dataOf(await patch(sorted.id, { orderBy: "name", dir: "desc" }));
    expect(again).toMatchObject({ orderBy: "name", dir: "desc" });
    expect(dataOf(await patch(sorted.id, { orderBy: null, dir: "desc" })).dir).toBe("asc");
  });

  it("a bad condition in the caller's own where, read with a view, is reported at its own path", async () => {
    const tableId = await newTable();
    const view = dataOf(
      await createView(tableId, {
        name: "two",
        where: [
          { column: "n", op: "gt", value: 0 },
          { column: "name", op: "not_empty" },
        ],
      }),
    );
    const read = await rows(tableId, {
      view: view.id,
      where: [{ column: "nope", op: "eq", value: 1 }],
    });
    expect(read.response.status).toBe(400);
    const issues = (read.error as { error: { issues?: { path: string }[] } }).error.issues;
    expect(issues?.map((i) => i.path)).toEqual(["where.0.column"]);
  });

  it("a view whose column changed type since, so its condition no longer applies, reads as 409 naming the column", async () => {
    const tableId = await newTable();
    await insert(tableId, [{ name: "a", n: 3 }]);
    const view = dataOf(
      await createView(tableId, { name: "big", where: [{ column: "n", op: "gt", value: 2 }] }),
    );
    expect(ids(dataOf(await rows(tableId, { view: view.id })))).toHaveLength(1);

    const retyped = await apiClient(key).PATCH("/api/tables/{id}", {
      params: { path: { id: tableId } },
      body: { columns: COLUMNS.map((c) => (c.id === "n" ? { ...c, type: "text" as const } : c)) },
    });
    expect(retyped.response.status).toBe(200);
    const read = await rows(tableId, { view: view.id });
    expect(read.response.status).toBe(409);
    expect(read.error).toMatchObject({ error: { code: "conflict" } });
    const message = JSON.stringify(read.error);
    expect(message).toContain('column \\"n\\"');
    expect(message).toContain("a text column");
  });
});

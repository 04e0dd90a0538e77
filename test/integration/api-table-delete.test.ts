import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "@/contracts/common";
import { runningAttempts } from "@/engine/cancellation";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { cellCounts, useWorker } from "../helpers/engine";
import { dbFingerprint } from "../helpers/fingerprint";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { waitTable } from "../helpers/tables";

let key: string;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url);
  key = (await newWorkspace()).key;
});

/** What is left anywhere of a table, by the foreign keys that point at it. */
async function leftovers(tableId: string): Promise<Record<string, number>> {
  const [row] = await queryRows<Record<string, number>>(
    getDatabase().db,
    sql`select
      (select count(*)::int from tables where id = ${tableId}) as tables,
      (select count(*)::int from rows where table_id = ${tableId}) as rows,
      (select count(*)::int from cells where table_id = ${tableId}) as cells,
      (select count(*)::int from executions where table_id = ${tableId}) as executions,
      (select count(*)::int from events where table_id = ${tableId}) as events,
      (select count(*)::int from dispatches where table_id = ${tableId}) as dispatches,
      (select count(*)::int from hooks where table_id = ${tableId}) as hooks`,
  );
  return row ?? {};
}

describe("DELETE /api/tables/:id", () => {
  it("stops the table's running cells at once, then deletes it with its rows, cells, runs, events and hooks", async () => {
    const t = await waitTable(key, { groups: 2, ms: 60_000, rows: 3 });
    const hook = await apiClient(key).POST("/api/tables/{id}/hooks", {
      params: { path: { id: t.id } },
      body: { action: "insert_rows" },
    });
    expect(hook.response.status).toBe(201);
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all" },
    });
    expect(run.response.status).toBe(202);
    // One attempt per row (its groups run in turn) is in flight in this process's worker,
    // each waiting out its minute.
    const started = await waitFor(async () => (await cellCounts(t.id)).running === 3, 20_000);
    expect(started, JSON.stringify(await cellCounts(t.id))).toBe(true);
    expect(runningAttempts()).toBeGreaterThanOrEqual(3);
    const before = await leftovers(t.id);
    expect(before.rows).toBe(3);
    expect(before.events).toBeGreaterThan(0);

    const res = await apiClient(key).DELETE("/api/tables/{id}", { params: { path: { id: t.id } } });
    expect(res.response.status).toBe(204);
    expect(await res.response.text()).toBe("");
    // Aborted, not left to wait out their minute against a table that is gone.
    expect(await waitFor(async () => runningAttempts() === 0, 5_000)).toBe(true);
    expect(await leftovers(t.id)).toEqual({
      tables: 0,
      rows: 0,
      cells: 0,
      executions: 0,
      events: 0,
      dispatches: 0,
      hooks: 0,
    });
    expect(
      (await apiClient(key).GET("/api/tables/{id}", { params: { path: { id: t.id } } })).response
        .status,
    ).toBe(404);
    const listed = await apiClient(key).GET("/api/tables");
    expect(dataOf(listed).tables.map((x) => x.id)).not.toContain(t.id);
  });

  it("a table deleted twice is 404 the second time", async () => {
    const t = await apiClient(key).POST("/api/tables", { body: { name: "once" } });
    expect(
      (await apiClient(key).DELETE("/api/tables/{id}", { params: { path: { id: dataOf(t).id } } }))
        .response.status,
    ).toBe(204);
    const again = await apiClient(key).DELETE("/api/tables/{id}", {
      params: { path: { id: dataOf(t).id } },
    });
    expect(again.response.status).toBe(404);
    expect(ApiError.parse(again.error).error.code).toBe("not_found");
  });

  it("another workspace's table is 404 and stays untouched", async () => {
    const other = await newWorkspace("other");
    const theirs = await waitTable(other.key, { groups: 1, ms: 60_000, rows: 2 });
    const before = await dbFingerprint();
    const res = await apiClient(key).DELETE("/api/tables/{id}", {
      params: { path: { id: theirs.id } },
    });
    expect(res.response.status).toBe(404);
    ApiError.parse(res.error);
    expect(await dbFingerprint()).toBe(before);
    expect(
      (await apiClient(other.key).GET("/api/tables/{id}", { params: { path: { id: theirs.id } } }))
        .response.status,
    ).toBe(200);
  });

  it("deleting one table leaves the workspace's other tables and their rows alone", async () => {
    const keep = await waitTable(key, { groups: 1, ms: 10, rows: 4 });
    const drop = await waitTable(key, { groups: 1, ms: 10, rows: 4 });
    expect(
      (await apiClient(key).DELETE("/api/tables/{id}", { params: { path: { id: drop.id } } }))
        .response.status,
    ).toBe(204);
    const kept = await apiClient(key).GET("/api/tables/{id}", {
      params: { path: { id: keep.id } },
    });
    expect(dataOf(kept).rowCount).toBe(4);
  });
});

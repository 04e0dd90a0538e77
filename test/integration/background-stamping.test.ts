/**
 * Large runs return after the first rows are stamped and a background job stamps the
 * rest; the window, completion and Stop keep their guarantees across that split.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getBackend } from "@/backends/instance";
import { stampRun, startRun } from "@/engine/dispatcher";
import { stopRuns } from "@/engine/stop";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { cellCounts, useWorker, waitForDispatch } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { waitTable } from "../helpers/tables";

let key: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url, 10);
  key = (await newWorkspace()).key;
});

describe("background stamping", () => {
  it("a page that finds fewer rows than it asked for ends the stamping: no empty page after it", async () => {
    const pagesOf = async (tableId: string, pageRows: number) => {
      const pages: string[] = [];
      const run = await stampRun(
        {
          db: db(),
          pause: async (point) => {
            if (point === "run:page") pages.push(point);
          },
        },
        {
          tableId,
          groupIds: ["g0"],
          mode: "all",
          rowIds: null,
          limit: null,
          window: 5,
          syncRows: 1_000,
          pageRows,
        },
      );
      const [d] = await queryRows<{ stamping: boolean; stamped: number }>(
        db(),
        sql`select stamping, stamped from dispatches where id = ${run.dispatchId}`,
      );
      await stopRuns({ db: db(), backend: getBackend() }, { tableId });
      return { pages: pages.length, stamping: d?.stamping, stamped: d?.stamped };
    };
    const tableId = (await waitTable(key, { groups: 1, ms: 0, rows: 7, waitOnly: true })).id;
    // 7 rows, pages of 10: one page finds them all and the end.
    expect(await pagesOf(tableId, 10)).toEqual({ pages: 1, stamping: false, stamped: 7 });
    // Pages of 7: the full page cannot know it was the last; the next, empty one says so.
    expect(await pagesOf(tableId, 7)).toEqual({ pages: 2, stamping: false, stamped: 7 });
    expect(await pagesOf(tableId, 3)).toEqual({ pages: 3, stamping: false, stamped: 7 });
  });

  it("a large run returns after the first pages and still runs every row exactly once", async () => {
    const tableId = (await waitTable(key, { groups: 1, ms: 0, rows: 2_500, waitOnly: true })).id;
    const run = await startRun(
      { db: db(), backend: getBackend() },
      {
        tableId,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 20,
        syncRows: 1_000,
      },
    );
    expect(run).toMatchObject({ stamped: 1_000, stamping: true });
    expect(await waitForDispatch(key, tableId, run.dispatchId, 120_000)).toBe("completed");
    const view = await apiClient(key).GET("/api/tables/{id}/runs/{dispatchId}", {
      params: { path: { id: tableId, dispatchId: run.dispatchId } },
    });
    expect(dataOf(view)).toMatchObject({
      stamped: 2_500,
      stamping: false,
      counts: { completed: 2_500, queued: 0, running: 0 },
    });
    const [dup] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from (select 1 from events where table_id = ${tableId} and kind = 'cell'
            and data->>'status' = 'completed' group by data->>'rowId' having count(*) > 1) x`,
    );
    expect(dup?.n).toBe(0);
  }, 180_000);

  it("a limit is honoured across the split", async () => {
    const tableId = (await waitTable(key, { groups: 1, ms: 0, rows: 2_200, waitOnly: true })).id;
    const run = await startRun(
      { db: db(), backend: getBackend() },
      {
        tableId,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: 1_700,
        window: 20,
        syncRows: 1_000,
      },
    );
    expect(await waitForDispatch(key, tableId, run.dispatchId, 120_000)).toBe("completed");
    expect(await cellCounts(tableId)).toEqual({ completed: 1_700 });
  }, 180_000);

  it("the background stamping goes on while the run's carriers hold every carrier slot of the worker", async () => {
    // Cells that wait a minute: the window's carriers take all of the worker's 10 carrier
    // slots and keep them. Stamping runs in the worker's own service slots: before, it
    // queued behind them and the run stayed at the rows its request stamped.
    const tableId = (await waitTable(key, { groups: 1, ms: 60_000, rows: 2_500, waitOnly: true }))
      .id;
    const run = await startRun(
      { db: db(), backend: getBackend() },
      {
        tableId,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 10,
        syncRows: 1_000,
      },
    );
    expect(run).toMatchObject({ stamped: 1_000, stamping: true });
    const running = async () => (await cellCounts(tableId)).running ?? 0;
    expect(await waitFor(async () => (await running()) === 10, 30_000)).toBe(true);
    const stamped = async () => {
      const [d] = await queryRows<{ stamped: number; stamping: boolean }>(
        db(),
        sql`select stamped, stamping from dispatches where id = ${run.dispatchId}`,
      );
      return d;
    };
    expect(await waitFor(async () => (await stamped())?.stamping === false, 60_000)).toBe(true);
    expect(await stamped()).toEqual({ stamped: 2_500, stamping: false });
    // The carriers were busy the whole time: nothing of the run had finished.
    expect(await running()).toBe(10);
    await stopRuns({ db: db(), backend: getBackend() }, { tableId });
  }, 180_000);

  it("Stop during background stamping leaves nothing queued or running, now or later", async () => {
    const tableId = (await waitTable(key, { groups: 1, ms: 60_000, rows: 4_000, waitOnly: true }))
      .id;
    const run = await startRun(
      { db: db(), backend: getBackend() },
      {
        tableId,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 5,
        syncRows: 1_000,
      },
    );
    expect(run.stamping).toBe(true);
    const stop = await stopRuns({ db: db(), backend: getBackend() }, { tableId });
    const now = await cellCounts(tableId);
    expect(now.queued ?? 0).toBe(0);
    expect(now.running ?? 0).toBe(0);
    expect(stop.cancelled).toBe(now.cancelled);
    expect(
      await waitFor(async () => {
        const [j] = await queryRows<{ n: number }>(
          db(),
          sql`select count(*)::int as n from graphile_worker.jobs`,
        );
        return j?.n === 0;
      }, 60_000),
    ).toBe(true);
    const later = await cellCounts(tableId);
    expect(later).toEqual(now);
    const view = await apiClient(key).GET("/api/tables/{id}/runs/{dispatchId}", {
      params: { path: { id: tableId, dispatchId: run.dispatchId } },
    });
    expect(dataOf(view)).toMatchObject({ status: "cancelled", stamping: false });
  }, 180_000);
});

/**
 * Events stay bounded (issue 33): a run's stamping writes one `dispatch` event per page
 * with its counts, not a `cell` event per queued cell, and a Stop over many cells writes
 * one `dispatch` event per run it cancelled cells of, not a `cell` event per cell. Reads
 * (what the grid refetches on those events) show the cells queued, then cancelled. Small
 * changes keep their `cell` events: a page of a few cells, a Stop of one row.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBackend } from "@/backends/instance";
import { CELL_EVENTS_UP_TO } from "@/contracts/events";
import { stampRun } from "@/engine/dispatcher";
import { stopRuns } from "@/engine/stop";
import { closeEventHub } from "@/events/instance";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { useWorker } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { openEvents } from "../helpers/sse";
import { waitTable } from "../helpers/tables";

let key: string;
const db = () => getDatabase().db;
const pause = async () => {};

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url);
  key = (await newWorkspace()).key;
});
afterAll(() => closeEventHub());

async function eventsOf(
  tableId: string,
): Promise<{ kind: string; data: Record<string, unknown> }[]> {
  return queryRows(
    db(),
    sql`select kind::text, data from events where table_id = ${tableId} order by id`,
  );
}

/**
 * The events a statement under test wrote: without `progress` events, which the worker's
 * counter fold writes whenever it passes, whatever else runs (a CI run saw one land
 * between a Stop and this read).
 */
const writtenBy = (events: { kind: string; data: Record<string, unknown> }[]) =>
  events.filter((e) => e.kind !== "progress");

/** Stamps a run over the table's rows in this process, without launching it: all stay queued. */
function stamp(tableId: string, rowIds: string[] | null = null) {
  return stampRun(
    { db: db(), pause },
    {
      tableId,
      groupIds: ["g0"],
      mode: "all",
      rowIds,
      limit: null,
      window: 5,
      syncRows: 10_000,
    },
  );
}

async function statuses(tableId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let cursor: string | undefined;
  do {
    const page = dataOf(
      await apiClient(key).GET("/api/tables/{id}/rows", {
        params: { path: { id: tableId }, query: { limit: 1_000, ...(cursor ? { cursor } : {}) } },
      }),
    );
    for (const r of page.rows) {
      const s = r.cells.g0?.status ?? "none";
      counts[s] = (counts[s] ?? 0) + 1;
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return counts;
}

describe("bounded events", () => {
  it("a 2,000-row run's stamping writes one dispatch event per page; a Stop of its 2,000 queued cells writes O(1)", async () => {
    const table = await waitTable(key, { groups: 1, ms: 0, rows: 2_000, waitOnly: true });
    const tableId = table.id;
    const stream = await openEvents(key, tableId);
    const before = (await eventsOf(tableId)).length;

    const run = await stamp(tableId);
    expect(run).toMatchObject({ stamped: 2_000, stamping: false });
    const stamped = (await eventsOf(tableId)).slice(before);
    // Before issue 33: 2,000 `cell` events (one `queued` per cell).
    expect(stamped.length).toBeLessThan(50);
    expect(stamped.filter((e) => e.kind === "cell")).toHaveLength(0);
    const pages = stamped.filter((e) => e.kind === "dispatch");
    expect(pages).toEqual([
      {
        kind: "dispatch",
        data: {
          dispatchId: run.dispatchId,
          status: "active",
          stamped: {
            cells: 1_000,
            rows: 1_000,
            afterPosition: expect.any(Number),
            lastPosition: expect.any(Number),
          },
        },
      },
      {
        kind: "dispatch",
        data: {
          dispatchId: run.dispatchId,
          status: "active",
          stamped: {
            cells: 1_000,
            rows: 1_000,
            afterPosition: expect.any(Number),
            lastPosition: expect.any(Number),
          },
        },
      },
    ]);
    // The pages' position ranges follow each other and cover every row.
    const [p1, p2] = pages.map(
      (p) => p.data.stamped as { afterPosition: number; lastPosition: number },
    );
    expect(p2?.afterPosition).toBe(p1?.lastPosition);
    // What a reader refetches on those events: every cell queued.
    expect(await statuses(tableId)).toEqual({ queued: 2_000 });
    // And the stream delivers them live.
    await stream.waitFor((ev) => ev.filter((e) => e.event === "dispatch").length >= 2);

    const beforeStop = (await eventsOf(tableId)).length;
    const stopped = await stopRuns({ db: db(), backend: getBackend() }, { tableId });
    expect(stopped.cancelled).toBe(2_000);
    const stopEvents = writtenBy((await eventsOf(tableId)).slice(beforeStop));
    // Before issue 33: 2,000 `cell` events (one `cancelled` per cell) and the run's end.
    expect(stopEvents).toEqual([
      {
        kind: "dispatch",
        data: { dispatchId: run.dispatchId, status: "active", cancelled: 2_000 },
      },
      { kind: "dispatch", data: { dispatchId: run.dispatchId, status: "cancelled" } },
    ]);
    expect(await statuses(tableId)).toEqual({ cancelled: 2_000 });
    await stream.waitFor((ev) =>
      ev.some((e) => e.event === "dispatch" && e.data.cancelled === 2_000),
    );
    await stream.close();
  }, 120_000);

  it(`a page of at most ${CELL_EVENTS_UP_TO} cells and a Stop of one row keep their cell events`, async () => {
    const table = await waitTable(key, { groups: 1, ms: 0, rows: 3, waitOnly: true });
    const tableId = table.id;
    const before = (await eventsOf(tableId)).length;
    const run = await stamp(tableId);
    const stamped = (await eventsOf(tableId)).slice(before);
    expect(stamped.filter((e) => e.kind === "cell").map((e) => e.data.status)).toEqual([
      "queued",
      "queued",
      "queued",
    ]);
    // The page's event comes too: a reader can rely on it whatever the page's size.
    expect(stamped.filter((e) => e.kind === "dispatch")).toEqual([
      {
        kind: "dispatch",
        data: {
          dispatchId: run.dispatchId,
          status: "active",
          stamped: {
            cells: 3,
            rows: 3,
            afterPosition: expect.any(Number),
            lastPosition: expect.any(Number),
          },
        },
      },
    ]);

    const beforeStop = (await eventsOf(tableId)).length;
    const rowId = table.rowIds[1] ?? "";
    await stopRuns({ db: db(), backend: getBackend() }, { tableId, rowIds: [rowId] });
    const stopEvents = writtenBy((await eventsOf(tableId)).slice(beforeStop));
    expect(stopEvents).toEqual([
      {
        kind: "cell",
        data: expect.objectContaining({ rowId, groupId: "g0", status: "cancelled" }),
      },
    ]);
    await stopRuns({ db: db(), backend: getBackend() }, { tableId });
  }, 60_000);
});

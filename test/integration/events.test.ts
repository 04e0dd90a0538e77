import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeEventHub } from "@/events/instance";
import { appendEvent } from "@/store/events/append";
import { pruneEvents } from "@/store/events/prune";
import { sequenceEvents } from "@/store/events/sequence";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { useWorker, waitForDispatch } from "../helpers/engine";
import { classifyDefinition, newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { openEvents } from "../helpers/sse";
import { workflowTable } from "../helpers/tables";

let key: string;
let tableId: string;
const db = () => getDatabase().db;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  await useWorker(url);
  key = (await newWorkspace()).key;
  ({ tableId } = await workflowTable(key, {
    workflow: classifyDefinition,
    outputs: { size: "result" },
    columns: [
      { id: "n", name: "N", type: "number" },
      { id: "size", name: "Size", type: "text" },
    ],
    group: { id: "classify", name: "C", inputs: { n: "n" } },
    rows: Array.from({ length: 10 }, (_, i) => ({ n: i })),
  }));
});
afterAll(() => closeEventHub());

async function allEventIdsAfter(after: number): Promise<number[]> {
  await sequenceEvents(db(), tableId);
  const rows = await queryRows<{ id: number }>(
    db(),
    sql`select seq as id from events where table_id = ${tableId} and seq > ${after} order by seq`,
  );
  return rows.map((r) => r.id);
}

/**
 * The stream delivered every stored event after `after` up to the last one it delivered,
 * in order, and nothing else. Read after the stream closed: an event written later (a
 * progress fold, say) has a later position than anything it delivered, so it cannot make
 * this differ.
 */
async function deliveredExactly(events: { id: number }[], after: number): Promise<boolean> {
  const got = events.map((e) => e.id);
  const upTo = got.at(-1) ?? after;
  const stored = (await allEventIdsAfter(after)).filter((id) => id <= upTo);
  return JSON.stringify(got) === JSON.stringify(stored);
}

/** No cell left to run and no run of the table still active. */
function tableQuiet(): Promise<boolean> {
  return waitFor(async () => {
    const [busy] = await queryRows<{ n: number }>(
      db(),
      sql`select ((select count(*) from cells where table_id = ${tableId}
                    and status in ('queued', 'running', 'paused'))
               + (select count(*) from dispatches where table_id = ${tableId}
                    and status = 'active'))::int as n`,
    );
    return busy?.n === 0;
  }, 30_000);
}

describe("events over SSE", () => {
  it("streams a run's cell and dispatch events live, in order, with the outputs in cell events", async () => {
    const stream = await openEvents(key, tableId);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toContain("text/event-stream");
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all" },
    });
    await stream.waitFor((ev) =>
      ev.some((e) => e.event === "dispatch" && e.data.status === "completed"),
    );
    await stream.close();
    const ids = stream.events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    const cells = stream.events.filter((e) => e.event === "cell");
    expect(cells.filter((e) => e.data.status === "queued")).toHaveLength(10);
    const completed = cells.filter((e) => e.data.status === "completed");
    expect(completed).toHaveLength(10);
    for (const e of completed) {
      expect(e.data).toMatchObject({
        groupId: "classify",
        executionId: expect.any(String),
        outputs: { size: expect.any(String) },
      });
    }
    expect(await waitForDispatch(key, tableId, startedRun(run).dispatchId)).toBe("completed");
  });

  it("after a drop, reconnecting with Last-Event-ID gets exactly the missed events, in order", async () => {
    const first = await openEvents(key, tableId);
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", limit: 4 },
    });
    await first.waitFor((ev) => ev.filter((e) => e.event === "cell").length >= 3);
    await first.close();
    const last = first.events.at(-1)?.id ?? 0;
    await waitForDispatch(key, tableId, startedRun(run).dispatchId);
    const rows = await apiClient(key).GET("/api/tables/{id}/rows", {
      params: { path: { id: tableId }, query: { limit: 1 } },
    });
    await apiClient(key).PATCH("/api/tables/{id}/rows/{rowId}", {
      params: { path: { id: tableId, rowId: dataOf(rows).rows[0]?.id as string } },
      body: { data: { n: 100 } },
    });
    // The edit auto-fires the row's group: its events must all be written before the
    // expected list is read, or the stream rightly delivers one the list lacks.
    expect(await tableQuiet()).toBe(true);

    const expected = await allEventIdsAfter(last);
    expect(expected.length).toBeGreaterThan(0);
    const again = await openEvents(key, tableId, { lastEventId: last });
    await again.waitFor((ev) => ev.length >= expected.length);
    await again.close();
    expect(await deliveredExactly(again.events, last)).toBe(true);
    expect(again.events.map((e) => e.id).slice(0, expected.length)).toEqual(expected);
    expect(again.events.some((e) => e.event === "rows")).toBe(true);
    // ?after= works the same way.
    const viaQuery = await openEvents(key, tableId, { after: last });
    await viaQuery.waitFor((ev) => ev.length >= expected.length);
    await viaQuery.close();
    expect(await deliveredExactly(viaQuery.events, last)).toBe(true);
    expect(viaQuery.events.map((e) => e.id).slice(0, expected.length)).toEqual(expected);
  });

  it("an event whose transaction commits after a later one is still delivered (no skip on commit order)", async () => {
    const slow = await getDatabase().pool.connect();
    try {
      await slow.query("begin");
      await slow.query("insert into events (table_id, kind, data) values ($1, 'rows', $2)", [
        tableId,
        JSON.stringify({ op: "update", rowIds: ["probe-first"] }),
      ]);
      const stream = await openEvents(key, tableId);
      await appendEvent(db(), tableId, "rows", { op: "update", rowIds: ["probe-second"] });
      await db().execute(sql`select pg_notify('cellflow_events', ${tableId})`);
      await stream.waitFor((ev) => ev.some((e) => probe(e.data) === "probe-second"));
      await slow.query("commit");
      await db().execute(sql`select pg_notify('cellflow_events', ${tableId})`);
      await stream.waitFor((ev) => ev.some((e) => probe(e.data) === "probe-first"));
      await stream.close();
      const probes = stream.events.map((e) => probe(e.data)).filter((p) => p?.startsWith("probe-"));
      expect(probes).toEqual(["probe-second", "probe-first"]);
    } finally {
      slow.release();
    }
  });

  it("a cursor older than retention gets one reset event", async () => {
    await apiClient(key).PATCH("/api/tables/{id}", {
      params: { path: { id: tableId } },
      body: { name: "renamed" },
    });
    await sequenceEvents(db(), tableId);
    const [oldest] = await queryRows<{ seq: number }>(
      db(),
      sql`select min(seq)::bigint as seq from events`,
    );
    // Past retention, and pruned as the maintenance pass prunes.
    await db().execute(
      sql`update events set created_at = now() - interval '2 days' where seq < ${(oldest?.seq ?? 0) + 5}`,
    );
    expect(await pruneEvents(db(), 24)).toBeGreaterThanOrEqual(5);
    const stream = await openEvents(key, tableId, { lastEventId: 1 });
    await stream.waitFor((ev) => ev.length >= 1);
    await stream.close();
    expect(stream.events.filter((e) => e.event === "reset")).toHaveLength(1);
    expect(stream.events[0]?.event).toBe("reset");
  });

  it("refuses a bad cursor, another workspace's table and a missing key", async () => {
    expect((await openEvents(key, tableId, { after: -1 as number })).status).toBe(400);
    const other = await newWorkspace("other");
    expect((await openEvents(other.key, tableId)).status).toBe(404);
    expect((await openEvents("cf_nobody", tableId)).status).toBe(401);
  });
});

/** The first row id a `rows` event names, if it is one. */
function probe(data: Record<string, unknown>): string | undefined {
  const ids = data.rowIds;
  return Array.isArray(ids) && typeof ids[0] === "string" ? ids[0] : undefined;
}

/**
 * The shared per-table feed behind SSE streams: many streams on one table cost one
 * sequence-and-read pass per wake-up, each stream still gets every event once and in
 * order, a stream joining with an old cursor reads its gap and then the live feed without
 * a hole or a repeat, a client that stops reading is cut off without holding up the
 * others, and a request whose client went away is not answered as our failure.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { log } from "@/config/log";
import { EventFeeds } from "@/events/feed";
import { closeEventHub, getEventHub } from "@/events/instance";
import { openEventStream } from "@/events/stream";
import { workspaceRoute } from "@/http/handler";
import { appendEvent } from "@/store/events/append";
import { sequenceEvents, sequenceStats } from "@/store/events/sequence";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";

let key: string;
const db = () => getDatabase().db;
let feeds: EventFeeds;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
  // No safety poll: every pass these tests count comes from a wake-up they caused.
  feeds = new EventFeeds({ db: db(), hub: getEventHub(), log: log(), safetyPollMs: 0 });
});
afterAll(async () => {
  feeds.close();
  await closeEventHub();
});

async function newTable(name: string): Promise<string> {
  const t = await apiClient(key).POST("/api/tables", {
    body: { name, columns: [{ id: "n", name: "N", type: "number" }], groups: [] },
  });
  // The table's own creation events come before any stream here opens.
  await sequenceEvents(db(), dataOf(t).id);
  const [row] = await queryRows<{ seq: number }>(
    db(),
    sql`select coalesce(max(seq), 0)::bigint as seq from events where table_id = ${dataOf(t).id}`,
  );
  bases.set(dataOf(t).id, row?.seq ?? 0);
  return dataOf(t).id;
}
const bases = new Map<string, number>();

interface Reader {
  ids: number[];
  ended: () => boolean;
  read(): void;
  close(): Promise<void>;
}

/** A stream opened on the test's own feeds; `read: false` leaves its body unread. */
async function open(
  tableId: string,
  after: number | null,
  opts: { read?: boolean; maxQueuedBytes?: number } = {},
): Promise<Reader> {
  const abort = new AbortController();
  const body = await openEventStream({
    db: db(),
    feeds,
    log: log(),
    tableId,
    after,
    signal: abort.signal,
    maxQueuedBytes: opts.maxQueuedBytes,
  });
  const ids: number[] = [];
  let ended = false;
  let reading: Promise<void> | undefined;
  const read = () => {
    reading ??= (async () => {
      const reader = body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let cut = buffer.indexOf("\n\n");
          while (cut >= 0) {
            const id = /^id: (\d+)$/m.exec(buffer.slice(0, cut));
            if (id?.[1]) ids.push(Number(id[1]));
            buffer = buffer.slice(cut + 2);
            cut = buffer.indexOf("\n\n");
          }
        }
      } catch {
        // Cancelled by close().
      } finally {
        ended = true;
      }
    })();
  };
  if (opts.read !== false) read();
  return {
    ids,
    ended: () => ended,
    read,
    async close() {
      abort.abort();
      read();
      await reading;
    },
  };
}

/** Appends `n` events, each committed on its own, then wakes the table's streams once. */
async function emit(tableId: string, n: number, tag = "e"): Promise<void> {
  for (let i = 0; i < n; i++)
    await appendEvent(db(), tableId, "rows", { op: "update", rowIds: [`${tag}-${i}`] });
  await db().execute(sql`select pg_notify('cellflow_events', ${tableId})`);
}

async function sequencedIds(tableId: string, after = bases.get(tableId) ?? 0): Promise<number[]> {
  await sequenceEvents(db(), tableId);
  const rows = await queryRows<{ seq: number }>(
    db(),
    sql`select seq from events where table_id = ${tableId} and seq > ${after} order by seq`,
  );
  return rows.map((r) => r.seq);
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  if (!(await waitFor(check, 30_000, 10))) throw new Error(`timed out waiting for ${what}`);
}

describe("shared table feed", () => {
  it("many streams on one table each receive every event exactly once, in order", async () => {
    const tableId = await newTable("many");
    const streams = await Promise.all(Array.from({ length: 40 }, () => open(tableId, null)));
    for (let round = 0; round < 5; round++) await emit(tableId, 7, `r${round}`);
    const expected = await sequencedIds(tableId);
    expect(expected).toHaveLength(35);
    await until(() => streams.every((s) => s.ids.length >= expected.length), "every stream");
    await Promise.all(streams.map((s) => s.close()));
    for (const s of streams) expect(s.ids).toEqual(expected);
  });

  it("sequence transactions do not grow with the number of streams", async () => {
    const passes = async (streamCount: number): Promise<number> => {
      const tableId = await newTable(`count-${streamCount}`);
      const streams = await Promise.all(
        Array.from({ length: streamCount }, () => open(tableId, null)),
      );
      await until(() => feeds.idle(tableId), "the feed's first pass");
      // Every sequence transaction of the process, whoever runs it.
      const before = sequenceStats.transactions;
      const wakes = 4;
      for (let w = 0; w < wakes; w++) {
        await emit(tableId, 3, `w${w}`);
        const want = (w + 1) * 3;
        await until(() => streams.every((s) => s.ids.length >= want), `wake ${w}`);
      }
      await until(() => feeds.idle(tableId), "the feed to settle");
      const runs = sequenceStats.transactions - before;
      await Promise.all(streams.map((s) => s.close()));
      // One pass per wake at most, however many streams share the feed.
      expect(runs).toBeLessThanOrEqual(wakes);
      return runs;
    };
    const one = await passes(1);
    const many = await passes(50);
    expect(many).toBeLessThanOrEqual(Math.max(one, 4));
    expect(feeds.stats.maxInFlight).toBe(1);
  });

  it("a storm of wake-ups runs one pass in flight and at most one more after it", async () => {
    const tableId = await newTable("storm");
    const stream = await open(tableId, null);
    await until(() => feeds.idle(tableId), "the feed's first pass");
    await appendEvent(db(), tableId, "rows", { op: "update", rowIds: ["storm"] });
    const before = sequenceStats.transactions;
    for (let i = 0; i < 1_000; i++) feeds.wake(tableId);
    await until(() => feeds.idle(tableId) && stream.ids.length === 1, "the storm to settle");
    expect(sequenceStats.transactions - before).toBeLessThanOrEqual(2);
    expect(feeds.stats.maxInFlight).toBe(1);
    await stream.close();
  });

  it("a late joiner with a cursor gets the gap, then the live feed, with no hole and no repeat", async () => {
    const tableId = await newTable("late");
    const early = await open(tableId, null);
    await emit(tableId, 30, "before");
    const firstBatch = await sequencedIds(tableId);
    await until(() => early.ids.length >= 30, "the early stream");
    const cursor = firstBatch[9] ?? 0;
    // The joiner connects while events keep coming, so its catch-up races live passes.
    const producing = (async () => {
      for (let i = 0; i < 10; i++) await emit(tableId, 5, `during${i}`);
    })();
    const late = await open(tableId, cursor);
    await producing;
    await emit(tableId, 5, "after");
    const all = await sequencedIds(tableId);
    await until(
      () => early.ids.length >= all.length && late.ids.at(-1) === all.at(-1),
      "both streams to reach the end",
    );
    await Promise.all([early.close(), late.close()]);
    expect(early.ids).toEqual(all);
    expect(late.ids).toEqual(all.filter((id) => id > cursor));
  });

  it("a client that stops reading is cut off and does not hold up the others", async () => {
    const tableId = await newTable("slow");
    const slow = await open(tableId, null, { read: false, maxQueuedBytes: 2_048 });
    const fast = await open(tableId, null);
    for (let i = 0; i < 10; i++) await emit(tableId, 10, `s${i}`);
    const all = await sequencedIds(tableId);
    await until(() => fast.ids.length >= all.length, "the reading stream");
    expect(fast.ids).toEqual(all);
    // The slow one gets what was queued before the cut, in order, then its end.
    slow.read();
    await until(() => slow.ended(), "the slow stream to end");
    expect(slow.ids.length).toBeLessThan(all.length);
    expect(slow.ids).toEqual(all.slice(0, slow.ids.length));
    await fast.close();
  });

  it("the feed closes with its last stream and a new one starts from the database", async () => {
    const tableId = await newTable("reopen");
    const first = await open(tableId, null);
    await emit(tableId, 3);
    await until(() => first.ids.length === 3, "the first stream");
    await first.close();
    await emit(tableId, 4);
    const second = await open(tableId, first.ids.at(-1) ?? 0);
    const all = await sequencedIds(tableId);
    await until(() => second.ids.length >= 4, "the second stream");
    await second.close();
    expect(second.ids).toEqual(all.slice(3));
  });

  it("a lost LISTEN connection is re-established and its streams are woken again", async () => {
    const tableId = await newTable("relisten");
    const stream = await open(tableId, null);
    const listeners = async () =>
      queryRows<{ pid: number }>(
        db(),
        sql`select pid from pg_stat_activity
             where datname = current_database() and query ilike 'listen %'`,
      );
    const [old] = await listeners();
    expect(old).toBeDefined();
    await db().execute(sql`select pg_terminate_backend(${old?.pid ?? 0})`);
    const reconnected = await waitFor(
      async () => (await listeners()).some((r) => r.pid !== old?.pid),
      30_000,
      20,
    );
    expect(reconnected).toBe(true);
    // These test feeds have no safety poll: only a notification can wake them now.
    await emit(tableId, 2);
    await until(() => stream.ids.length === 2, "the stream after the reconnect");
    await stream.close();
  });
});

describe("a request whose client went away", () => {
  it("is answered 499 without running as a failure of ours", async () => {
    const route = workspaceRoute(async (req) => {
      await req.json();
      return new Response("read");
    });
    const abort = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"partial":'));
        abort.abort();
        controller.error(Object.assign(new Error("aborted"), { code: "ECONNRESET" }));
      },
    });
    const res = await route(
      new Request("http://cellflow.test/api/x", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body,
        duplex: "half",
        signal: abort.signal,
      } as RequestInit),
      { params: Promise.resolve({}) },
    );
    expect(res.status).toBe(499);
  });
});

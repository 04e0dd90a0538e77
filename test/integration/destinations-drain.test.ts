/**
 * The destinations' drain and sender against the engine, on real Postgres with forced
 * interleavings: a drain turn ends when a pass finds fewer marks than a batch, so cells
 * that keep ending never keep the sender from claiming; a failed drain still lets the
 * loop claim and send; `stop()` returns between two passes; a row whose carrier holds its
 * lock is not judged (its marks stay), so a row with an auto-run group is sent once,
 * complete, after its cascade; a missing server key is logged as an error; a
 * destination's sends start as soon as it is claimed.
 */
import { randomBytes } from "node:crypto";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { log } from "@/config/log";
import { runCarrier } from "@/engine/carrier";
import { startDestinationLoop } from "@/engine/destination-loop";
import {
  claimDue,
  drainAllMarks,
  type SenderSettings,
  sendDelivery,
  senderSettings,
} from "@/engine/destination-send";
import { rowLockKey } from "@/engine/row-lock";
import { DRAIN_LOCK_KEY, drainDestinationMarks } from "@/store/destinations/drain-marks";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Receiver, startReceiver } from "../helpers/destination-receiver";
import { engineDeps } from "../helpers/engine";
import { onPoint, RecordingBackend, taskContext } from "../helpers/engine-harness";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";

process.env.CELLFLOW_SECRET_KEY ??= randomBytes(32).toString("base64");

const db = () => getDatabase().db;
let url: string;
let key: string;
let receiver: Receiver;

beforeAll(async () => {
  url = (await useTestDatabase()).url;
  key = (await newWorkspace()).key;
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

function settings(over: Partial<SenderSettings> = {}): SenderSettings {
  return senderSettings({ db: db(), log: log(), timeoutMs: 2_000, ...over });
}

async function pass(s = settings()): Promise<number> {
  await drainAllMarks(s);
  const claimed = await claimDue(s);
  await Promise.all(claimed.map((d) => sendDelivery(s, d)));
  return claimed.length;
}

async function withDestination(tableId: string): Promise<string> {
  const d = dataOf(
    await apiClient(key).POST("/api/tables/{id}/destinations", {
      params: { path: { id: tableId } },
      body: { url: receiver.url },
    }),
  );
  receiver.secret = d.secret;
  return d.id;
}

/** A table of `rows` rows, each with one queued cell of group `ga`. */
async function queuedTable(rows: number): Promise<{ tableId: string; rowIds: string[] }> {
  const tableId = dataOf(
    await apiClient(key).POST("/api/tables", {
      body: { name: "drain", columns: [{ id: "v", name: "V", type: "text" }] },
    }),
  ).id;
  const rowIds = dataOf(
    await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
      body: { rows: Array.from({ length: rows }, (_, i) => ({ data: { v: `v${i}` } })) },
    }),
  ).rows.map((r) => r.id);
  for (const [i, rowId] of rowIds.entries())
    await db().execute(
      sql`insert into cells (table_id, row_id, group_id, row_position, status, execution_id)
          values (${tableId}, ${rowId}, 'ga', ${i}, 'queued', ${`ex_${rowId}`})`,
    );
  return { tableId, rowIds };
}

const endAll = (tableId: string) =>
  db().execute(sql`update cells set status = 'completed' where table_id = ${tableId}`);

async function marksOf(tableId: string): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db(),
    sql`select count(*)::int as n from destination_marks where table_id = ${tableId}`,
  );
  return r?.n ?? 0;
}

async function deliveriesOf(destinationId: string): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db(),
    sql`select count(*)::int as n from destination_deliveries where destination_id = ${destinationId}`,
  );
  return r?.n ?? 0;
}

function reset(): void {
  receiver.received.length = 0;
  receiver.answer = () => 200;
}

describe("a drain turn is bounded", () => {
  it("ends when a pass finds fewer marks than a batch, while cells keep ending during each pass", async () => {
    const { tableId } = await queuedTable(1);
    const dest = await withDestination(tableId);
    await endAll(tableId);
    // Each delivery the drain makes ends "another cell" of its row in the same moment:
    // a new mark, past the pass's snapshot, up to 20 times.
    await db().execute(sql`create table if not exists test_feed (n int)`);
    await db().execute(sql`create or replace function test_feed_mark() returns trigger
      language plpgsql as $$ begin
        if (select count(*) from test_feed) < 20 then
          insert into test_feed values (1);
          insert into destination_marks (table_id, row_id)
            select r.table_id, r.id from rows r where r.id = NEW.row_id;
        end if;
        return null;
      end $$`);
    await db().execute(sql`create trigger test_feed after insert on destination_deliveries
      for each row execute function test_feed_mark()`);
    try {
      const drained = await drainAllMarks(settings());
      expect(drained).toEqual({ deliveries: 1, more: false });
      expect(await marksOf(tableId)).toBe(1);
    } finally {
      await db().execute(sql`drop trigger test_feed on destination_deliveries`);
      await db().execute(sql`drop function test_feed_mark()`);
      await db().execute(sql`drop table test_feed`);
    }
    await db().execute(sql`delete from destination_marks where table_id = ${tableId}`);
    await db().execute(sql`delete from destination_deliveries where destination_id = ${dest}`);
  });

  it("an idle turn (no mark anywhere) takes neither the drain lock nor a look at the row locks", async () => {
    await db().execute(sql`delete from destination_marks`);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query("select pg_advisory_lock($1)", [DRAIN_LOCK_KEY]);
      // The lock is busy: a turn that went for it would answer null ("another drains").
      expect(await drainDestinationMarks(db(), new Date())).toEqual({ marks: 0, deliveries: 0 });
    } finally {
      await holder.end();
    }
  });

  it("claims and sends what is due when the drain fails", async () => {
    reset();
    const { tableId } = await queuedTable(1);
    const dest = await withDestination(tableId);
    await endAll(tableId);
    await drainAllMarks(settings());
    expect(await deliveriesOf(dest)).toBe(1);
    // A new mark the drain cannot take: its delete fails.
    await db().execute(sql`insert into destination_marks (table_id, row_id) values ('t_x', 'r_x')`);
    await db().execute(sql`create or replace function test_no_drain() returns trigger
      language plpgsql as $$ begin raise exception 'drain broken'; end $$`);
    await db().execute(sql`create trigger test_no_drain before delete on destination_marks
      for each row execute function test_no_drain()`);
    const loop = startDestinationLoop(settings(), 3_600_000);
    try {
      await loop.tick();
    } finally {
      await loop.stop();
      await db().execute(sql`drop trigger test_no_drain on destination_marks`);
      await db().execute(sql`drop function test_no_drain()`);
      await db().execute(sql`delete from destination_marks where table_id = 't_x'`);
    }
    expect(receiver.received.map((r) => JSON.parse(r.body).tableId)).toEqual([tableId]);
  });

  it("stop() returns after the drain pass in progress, leaving the other marks", async () => {
    reset();
    const { tableId } = await queuedTable(5);
    const dest = await withDestination(tableId);
    await endAll(tableId);
    const loop = startDestinationLoop(settings({ drainBatch: 1 }), 3_600_000);
    // The turn's first pass is under way when stop() aborts it.
    const ticking = loop.tick();
    await loop.stop();
    await ticking;
    expect(await deliveriesOf(dest)).toBe(1);
    expect(await marksOf(tableId)).toBe(4);
    expect(receiver.received).toHaveLength(0);
    while ((await pass()) > 0);
    expect(receiver.received).toHaveLength(5);
  });
});

describe("a row whose carrier holds its lock", () => {
  it("keeps its marks, unjudged, until the carrier lets go; then sends the row once", async () => {
    reset();
    const { tableId, rowIds } = await queuedTable(2);
    const dest = await withDestination(tableId);
    const [held = "", free = ""] = rowIds;
    await endAll(tableId);
    const carrier = new pg.Client({ connectionString: url });
    await carrier.connect();
    try {
      await carrier.query("select pg_advisory_lock($1::bigint)", [rowLockKey(tableId, held)]);
      expect(await drainAllMarks(settings())).toMatchObject({ deliveries: 1 });
      expect(await marksOf(tableId)).toBe(1);
      await carrier.query("select pg_advisory_unlock($1::bigint)", [rowLockKey(tableId, held)]);
      expect(await drainAllMarks(settings())).toMatchObject({ deliveries: 1 });
    } finally {
      await carrier.end();
    }
    expect(await marksOf(tableId)).toBe(0);
    expect(await pass()).toBe(2);
    expect(receiver.received.map((r) => JSON.parse(r.body).rowId).sort()).toEqual(
      [held, free].sort(),
    );
    expect(await deliveriesOf(dest)).toBe(2);
  });
});

describe("a table with an auto-run group", () => {
  it("is sent once its cascade is done, with both groups' outputs, even when a drain runs before the auto-run stamp", async () => {
    reset();
    const wf = (expression: string, input?: string) =>
      apiClient(key).POST("/api/workflows", {
        body: {
          name: "w",
          definition: {
            inputs: input ? [{ name: input, type: "json", required: true }] : [],
            blocks: [{ id: "out", type: "transform", expression }],
          },
        },
      });
    const echo = dataOf(await wf("inputs.v", "v")).id;
    const group = (id: string, input: string, output: string) => ({
      id,
      name: id,
      kind: "workflow" as const,
      workflowId: echo,
      inputs: { v: input },
      outputs: [{ columnId: output, from: "out" }],
      autoRun: true,
      dependsOn: [input],
    });
    const tableId = dataOf(
      await apiClient(key).POST("/api/tables", {
        body: {
          name: "auto",
          columns: ["n", "a", "b"].map((id) => ({ id, name: id, type: "json" as const })),
          groups: [group("ga", "n", "a"), group("gb", "a", "b")],
        },
      }),
    ).id;
    await withDestination(tableId);
    const rowId = dataOf(
      await apiClient(key).POST("/api/tables/{id}/rows", {
        params: { path: { id: tableId } },
        body: { rows: [{ data: { n: 7 } }] },
      }),
    ).rows[0]?.id as string;
    let sentMidway = -1;
    await runCarrier(
      engineDeps({
        backend: new RecordingBackend(),
        // ga has ended (its mark committed), gb is not stamped yet: a pass runs here.
        pause: onPoint("carrier:auto", 1, async () => {
          sentMidway = await pass();
        }),
      }),
      { tableId, rowId },
      taskContext(),
    );
    expect(sentMidway).toBe(0);
    expect(await pass()).toBe(1);
    expect(receiver.received).toHaveLength(1);
    const body = JSON.parse(receiver.received[0]?.body ?? "{}");
    expect(body.data).toMatchObject({ n: 7, a: 7, b: 7 });
    expect(body.cells).toMatchObject({ ga: { status: "completed" }, gb: { status: "completed" } });
  });
});

describe("a send without the server key", () => {
  it("logs an error, not an info line, and retries the delivery", async () => {
    reset();
    const { tableId } = await queuedTable(1);
    const dest = await withDestination(tableId);
    await endAll(tableId);
    const errors: string[] = [];
    const recording = Object.assign(Object.create(log()), {
      error: (_o: unknown, msg: string) => errors.push(msg),
    }) as ReturnType<typeof log>;
    const s = settings({ log: recording });
    await drainAllMarks(s);
    const saved = process.env.CELLFLOW_SECRET_KEY;
    delete process.env.CELLFLOW_SECRET_KEY;
    try {
      const claimed = (await claimDue(s)).filter((d) => d.destinationId === dest);
      expect(claimed).toHaveLength(1);
      for (const d of claimed) await sendDelivery(s, d);
    } finally {
      process.env.CELLFLOW_SECRET_KEY = saved;
    }
    expect(errors).toEqual([
      "CELLFLOW_SECRET_KEY is not set: destination deliveries cannot be signed",
    ]);
    expect(receiver.received).toHaveLength(0);
    await db().execute(sql`delete from destination_deliveries where destination_id = ${dest}`);
  });
});

describe("claims and sends", () => {
  it("starts a destination's sends as soon as it is claimed, while the next destination's claim waits", async () => {
    reset();
    const { tableId } = await queuedTable(1);
    const first = await withDestination(tableId);
    const second = await withDestination(tableId);
    await endAll(tableId);
    await drainAllMarks(settings());
    // The second destination's claim (whichever goes second) waits on a lock the test holds.
    const gate = new pg.Client({ connectionString: url });
    await gate.connect();
    await gate.query("select pg_advisory_lock(7461131)");
    await db().execute(sql`create table test_claimed (destination_id text primary key)`);
    await db().execute(sql`create or replace function test_gate() returns trigger
      language plpgsql as $$ begin
        insert into test_claimed values (NEW.destination_id) on conflict do nothing;
        if (select count(*) from test_claimed) > 1 then
          perform pg_advisory_xact_lock(7461131);
        end if;
        return NEW;
      end $$`);
    await db().execute(sql`create trigger test_gate before update of lease_until
      on destination_deliveries for each row execute function test_gate()`);
    const loop = startDestinationLoop(settings(), 3_600_000);
    try {
      const ticking = loop.tick();
      expect(await waitFor(() => receiver.received.length === 1, 5_000, 20)).toBe(true);
      await gate.query("select pg_advisory_unlock(7461131)");
      await ticking;
    } finally {
      await gate.end();
      await loop.stop();
      await db().execute(sql`drop trigger test_gate on destination_deliveries`);
      await db().execute(sql`drop function test_gate()`);
      await db().execute(sql`drop table test_claimed`);
    }
    expect(receiver.received).toHaveLength(2);
    expect(await deliveriesOf(first)).toBe(1);
    expect(await deliveriesOf(second)).toBe(1);
  });
});

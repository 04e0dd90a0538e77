/**
 * The destinations' outbox on real Postgres, with a local receiver and an injected clock:
 * a row is sent once none of its cells is queued, running or paused (also when its last
 * two cells end in concurrent transactions); nothing is marked for a table without an
 * enabled destination; 2xx delivers, 408/429/5xx, timeouts and dropped or refused
 * connections retry with backoff under the same id and body, other 4xx fail, and retries
 * stop after 24 h; a row's deliveries go out in order; at most 10 are in flight per
 * destination, also with claimers racing; a lease that runs out (a killed sender) re-sends
 * the same body under the same id; delivered entries are pruned after 7 days.
 */
import { randomBytes } from "node:crypto";
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { log } from "@/config/log";
import { RETRY_WINDOW_MS } from "@/domain/delivery-backoff";
import {
  claimDue,
  drainAllMarks,
  type SenderSettings,
  sendDelivery,
  senderSettings,
} from "@/engine/destination-send";
import { inFlight } from "@/store/destinations/claim";
import { drainDestinationMarks } from "@/store/destinations/drain-marks";
import { pruneDestinationDeliveries } from "@/store/destinations/prune";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Receiver, startReceiver } from "../helpers/destination-receiver";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";

process.env.CELLFLOW_SECRET_KEY ??= randomBytes(32).toString("base64");

const db = () => getDatabase().db;
let url: string;
let key: string;
let receiver: Receiver;
let clock = Date.parse("2030-01-01T00:00:00Z");

beforeAll(async () => {
  url = (await useTestDatabase()).url;
  key = (await newWorkspace()).key;
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

function settings(over: Partial<SenderSettings> = {}): SenderSettings {
  return senderSettings({
    db: db(),
    log: log(),
    now: () => new Date(clock),
    random: () => 0,
    retryBaseMs: 1_000,
    timeoutMs: 300,
    ...over,
  });
}

/** One pass: drain, claim, send every claimed delivery and settle it. */
async function pass(s = settings()): Promise<number> {
  await drainAllMarks(s);
  const claimed = await claimDue(s);
  await Promise.all(claimed.map((d) => sendDelivery(s, d)));
  return claimed.length;
}

async function newTable(rows: number): Promise<{ tableId: string; rowIds: string[] }> {
  const tableId = dataOf(
    await apiClient(key).POST("/api/tables", {
      body: { name: "sent", columns: [{ id: "v", name: "V", type: "text" }] },
    }),
  ).id;
  const ins = dataOf(
    await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
      body: { rows: Array.from({ length: rows }, (_, i) => ({ data: { v: `v${i}` } })) },
    }),
  );
  return { tableId, rowIds: ins.rows.map((r) => r.id) };
}

async function newDestination(tableId: string): Promise<{ id: string; secret: string }> {
  const res = await apiClient(key).POST("/api/tables/{id}/destinations", {
    params: { path: { id: tableId } },
    body: { url: receiver.url, name: "receiver" },
  });
  expect(res.response.status).toBe(201);
  const d = dataOf(res);
  receiver.secret = d.secret;
  return d;
}

/** Cells of `groups` on every row, all queued (as a run's stamp leaves them). */
async function queue(tableId: string, rowIds: string[], groups: string[]): Promise<void> {
  for (const [i, rowId] of rowIds.entries())
    for (const g of groups)
      await db().execute(
        sql`insert into cells (table_id, row_id, group_id, row_position, status, execution_id, dispatch_id)
            values (${tableId}, ${rowId}, ${g}, ${i}, 'queued', ${`ex_${rowId}_${g}`}, 'dsp_test')
            on conflict (row_id, group_id) do update set status = 'queued'`,
      );
}

const end = (rowId: string, group: string, status = "completed") =>
  sql`update cells set status = ${status}::cell_status where row_id = ${rowId} and group_id = ${group}`;

async function deliveries(destinationId: string) {
  return queryRows<{
    id: string;
    row_id: string;
    seq: number;
    status: string;
    attempts: number;
    last_error: string | null;
  }>(
    db(),
    sql`select id, row_id, seq, status, attempts, last_error from destination_deliveries
         where destination_id = ${destinationId} order by row_id, seq`,
  );
}

function reset(answer: Receiver["answer"] = () => 200): void {
  receiver.received.length = 0;
  receiver.answer = answer;
}

describe("the send rule", () => {
  it("sends a row once its last cell ends, signed, with the row as it was then and the run's id", async () => {
    reset();
    const { tableId, rowIds } = await newTable(2);
    const dest = await newDestination(tableId);
    await queue(tableId, rowIds, ["ga", "gb"]);
    const [r0 = "", r1 = ""] = rowIds;
    await db().execute(end(r0, "ga"));
    await db().execute(end(r1, "ga"));
    expect(await pass()).toBe(0);
    await db().execute(end(r0, "gb", "error"));
    expect(await pass()).toBe(1);
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0];
    expect(got?.signed).toBe(true);
    const body = JSON.parse(got?.body ?? "{}") as Record<string, unknown>;
    expect(body).toMatchObject({ tableId, rowId: r0, data: { v: "v0" }, dispatchId: "dsp_test" });
    expect(Object.keys(body.cells as object).sort()).toEqual(["ga", "gb"]);
    expect(body.cells).toMatchObject({ ga: { status: "completed" }, gb: { status: "error" } });
    expect((await deliveries(dest.id)).map((d) => d.status)).toEqual(["delivered"]);
  });

  it("writes no mark for a table without an enabled destination", async () => {
    const { tableId, rowIds } = await newTable(3);
    const dest = await newDestination(tableId);
    await apiClient(key).PATCH("/api/tables/{id}/destinations/{destinationId}", {
      params: { path: { id: tableId, destinationId: dest.id } },
      body: { enabled: false },
    });
    await queue(tableId, rowIds, ["ga"]);
    for (const r of rowIds) await db().execute(end(r, "ga"));
    const [marks] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from destination_marks where table_id = ${tableId}`,
    );
    expect(marks?.n).toBe(0);
  });

  it("sends a row whose last two cells end in concurrent transactions, each seeing the other still active", async () => {
    reset();
    const { tableId, rowIds } = await newTable(1);
    const dest = await newDestination(tableId);
    const rowId = rowIds[0] ?? "";
    await queue(tableId, rowIds, ["ga", "gb"]);
    const a = new pg.Client({ connectionString: url });
    const b = new pg.Client({ connectionString: url });
    await a.connect();
    await b.connect();
    try {
      await a.query("begin");
      await b.query("begin");
      // Each ends its cell while the other's end is uncommitted: each sees the other active.
      await a.query("update cells set status = 'completed' where row_id = $1 and group_id = 'ga'", [
        rowId,
      ]);
      await b.query("update cells set status = 'cancelled' where row_id = $1 and group_id = 'gb'", [
        rowId,
      ]);
      await a.query("commit");
      // The drainer runs between the two commits: gb still looks queued, nothing is sent.
      expect(await pass()).toBe(0);
      await b.query("commit");
      expect(await pass()).toBe(1);
    } finally {
      await a.end();
      await b.end();
    }
    expect(receiver.received.map((r) => JSON.parse(r.body).rowId)).toEqual([rowId]);
    expect(JSON.parse(receiver.received[0]?.body ?? "{}").cells).toMatchObject({
      ga: { status: "completed" },
      gb: { status: "cancelled" },
    });
    expect(await deliveries(dest.id)).toHaveLength(1);
  });
});

describe("whole rows per drain pass", () => {
  it("sends a row once when its marks fall on both sides of a pass's cut", async () => {
    reset();
    const { tableId, rowIds } = await newTable(2);
    const dest = await newDestination(tableId);
    const [r0 = "", r1 = ""] = rowIds;
    await queue(tableId, [r0], ["ga", "gb"]);
    await queue(tableId, [r1], ["ga"]);
    // Marks in id order: r0's first, r1's, r0's second; a pass of two cuts r0's in half.
    await db().execute(end(r0, "ga"));
    await db().execute(end(r1, "ga"));
    await db().execute(end(r0, "gb"));
    const first = await drainDestinationMarks(db(), new Date(clock), 2);
    expect(first).toMatchObject({ marks: 2, deliveries: 2 });
    const second = await drainDestinationMarks(db(), new Date(clock), 2);
    expect(second).toMatchObject({ marks: 0, deliveries: 0 });
    const made = await deliveries(dest.id);
    expect(made.map((d) => d.row_id).sort()).toEqual([r0, r1].sort());
    expect(await pass()).toBe(2);
    expect(receiver.received.map((r) => JSON.parse(r.body).rowId).sort()).toEqual([r0, r1].sort());
  });
});

describe("delivery", () => {
  it("retries 5xx, 429, 408, a timeout, a dropped and a refused connection under the same id and body, then delivers", async () => {
    const answers: Receiver["answer"][] = [
      () => 503,
      () => 429,
      () => 408,
      () => "hang",
      () => "drop",
    ];
    const { tableId, rowIds } = await newTable(1);
    const dest = await newDestination(tableId);
    await queue(tableId, rowIds, ["ga"]);
    await db().execute(end(rowIds[0] ?? "", "ga"));
    reset();
    for (const [i, answer] of answers.entries()) {
      receiver.answer = answer;
      expect(await pass()).toBe(1);
      receiver.release(503);
      const [d] = await deliveries(dest.id);
      expect(d).toMatchObject({ status: "pending", attempts: i + 1 });
      expect(d?.last_error).toBeTruthy();
      // Not due before its backoff (base 1 s · 2^i, no jitter here): nothing is claimed.
      clock += 1_000 * 2 ** i - 1;
      expect(await pass()).toBe(0);
      clock += 1;
    }
    // The receiver is down: connection refused is retried too; then it comes back.
    await receiver.close();
    expect(await pass()).toBe(1);
    expect((await deliveries(dest.id))[0]?.last_error).toMatch(
      /ECONNREFUSED|refused|fetch failed/i,
    );
    await receiver.restart();
    receiver.answer = () => 200;
    clock += 60_000;
    expect(await pass()).toBe(1);
    expect((await deliveries(dest.id))[0]).toMatchObject({ status: "delivered", attempts: 7 });
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.bodyHash)).size).toBe(1);
    expect(receiver.received.every((r) => r.signed)).toBe(true);
  });

  it("fails at once on another 4xx, and after 24 h of retryable failures", async () => {
    const { tableId, rowIds } = await newTable(2);
    const dest = await newDestination(tableId);
    await queue(tableId, rowIds, ["ga"]);
    const [r0 = "", r1 = ""] = rowIds;
    reset(() => 404);
    await db().execute(end(r0, "ga"));
    expect(await pass()).toBe(1);
    expect((await deliveries(dest.id))[0]).toMatchObject({
      status: "failed",
      last_error: "HTTP 404",
    });
    reset(() => 500);
    await db().execute(end(r1, "ga"));
    expect(await pass()).toBe(1);
    clock += RETRY_WINDOW_MS;
    expect(await pass()).toBe(1);
    expect((await deliveries(dest.id)).find((d) => d.row_id === r1)).toMatchObject({
      status: "failed",
      last_error: "HTTP 500",
      attempts: 2,
    });
  });

  it("sends a row's deliveries in order: the second waits while the first is retried", async () => {
    const { tableId, rowIds } = await newTable(1);
    const dest = await newDestination(tableId);
    const rowId = rowIds[0] ?? "";
    reset(() => 500);
    await queue(tableId, rowIds, ["ga"]);
    await db().execute(end(rowId, "ga"));
    expect(await pass()).toBe(1);
    // The row runs again and finishes again: a second delivery, behind the first.
    await queue(tableId, rowIds, ["ga"]);
    await db().execute(end(rowId, "ga", "error"));
    reset(() => 200);
    expect(await pass()).toBe(0);
    clock += 10_000;
    expect(await pass()).toBe(1);
    expect(await pass()).toBe(1);
    const sent = receiver.received.map((r) => JSON.parse(r.body).cells.ga.status);
    expect(sent).toEqual(["completed", "error"]);
    expect((await deliveries(dest.id)).map((d) => [d.seq, d.status])).toEqual([
      [1, "delivered"],
      [2, "delivered"],
    ]);
  });
});

describe("leases and the in-flight cap", () => {
  it("never has more than 10 deliveries of a destination in flight, with claimers racing", async () => {
    const { tableId, rowIds } = await newTable(25);
    const dest = await newDestination(tableId);
    await queue(tableId, rowIds, ["ga"]);
    for (const r of rowIds) await db().execute(end(r, "ga"));
    const s = settings();
    await drainAllMarks(s);
    const racing = await Promise.all([claimDue(s), claimDue(s), claimDue(s), claimDue(s)]);
    const mine = racing.flat().filter((d) => d.destinationId === dest.id);
    expect(mine).toHaveLength(10);
    expect(new Set(mine.map((d) => d.id)).size).toBe(10);
    expect((await claimDue(s)).filter((d) => d.destinationId === dest.id)).toHaveLength(0);
    reset(() => 200);
    await Promise.all(mine.map((d) => sendDelivery(s, d)));
    const next = (await claimDue(s)).filter((d) => d.destinationId === dest.id);
    expect(next).toHaveLength(10);
    await Promise.all(next.map((d) => sendDelivery(s, d)));
    while ((await pass()) > 0);
    expect((await deliveries(dest.id)).every((d) => d.status === "delivered")).toBe(true);
  });

  it("re-sends the same body under the same id when a sender dies mid-delivery and its lease runs out", async () => {
    const { tableId, rowIds } = await newTable(1);
    const dest = await newDestination(tableId);
    await queue(tableId, rowIds, ["ga"]);
    await db().execute(end(rowIds[0] ?? "", "ga"));
    reset(() => "hang");
    const s = settings();
    await drainAllMarks(s);
    const [first] = (await claimDue(s)).filter((d) => d.destinationId === dest.id);
    if (!first) throw new Error("nothing claimed");
    // The process dies here: it posted, never settled. Until the lease ends, nobody re-sends.
    const killed = new AbortController();
    const dying = sendDelivery(s, first, killed.signal);
    // The post is out (the receiver holds it, hanging) before anyone else looks.
    expect(
      await waitFor(async () => receiver.received.some((x) => x.id === first.id), 10_000, 5),
    ).toBe(true);
    expect((await claimDue(s)).filter((d) => d.destinationId === dest.id)).toHaveLength(0);
    clock += s.leaseMs;
    receiver.answer = () => 200;
    const [again] = (await claimDue(s)).filter((d) => d.destinationId === dest.id);
    expect(again?.id).toBe(first.id);
    expect(again?.body).toBe(first.body);
    if (again) expect(await sendDelivery(s, again)).toBe(true);
    // The dead sender's late outcome loses its guard: it writes nothing.
    killed.abort();
    receiver.release(500);
    expect(await dying).toBe(false);
    expect((await deliveries(dest.id))[0]).toMatchObject({ status: "delivered", attempts: 2 });
    expect(receiver.received.map((r) => r.id)).toEqual([first.id, first.id]);
    expect(new Set(receiver.received.map((r) => r.bodyHash)).size).toBe(1);
  });

  it("counts a destination's deliveries in flight from the lease index, not over its pending backlog", async () => {
    const { tableId } = await newTable(1);
    const dest = await newDestination(tableId);
    await db().execute(
      sql`insert into destination_deliveries (id, destination_id, row_id, seq, body, next_attempt_at, created_at)
          select 'dlv_backlog_' || i, ${dest.id}, 'row_backlog', i, '{}', now(), now()
            from generate_series(1, 5000) i`,
    );
    await db().execute(sql`analyze destination_deliveries`);
    const [plan] = await queryRows<{ "QUERY PLAN": unknown }>(
      db(),
      sql`explain (format json) ${inFlight(dest.id, new Date(clock))}`,
    );
    expect(JSON.stringify(plan?.["QUERY PLAN"])).toContain("destination_deliveries_lease_idx");
    await db().execute(sql`delete from destination_deliveries where row_id = 'row_backlog'`);
  });

  it("prunes delivered entries after 7 days and failed ones after 30, never pending ones", async () => {
    const { tableId, rowIds } = await newTable(2);
    const dest = await newDestination(tableId);
    await queue(tableId, rowIds, ["ga"]);
    reset(() => 200);
    await db().execute(end(rowIds[0] ?? "", "ga"));
    await pass();
    reset(() => 400);
    await db().execute(end(rowIds[1] ?? "", "ga"));
    await pass();
    const statuses = async () => (await deliveries(dest.id)).map((d) => d.status).sort();
    await pruneDestinationDeliveries(db(), new Date(clock + 6 * 86_400_000));
    expect(await statuses()).toEqual(["delivered", "failed"]);
    expect(
      await pruneDestinationDeliveries(db(), new Date(clock + 8 * 86_400_000)),
    ).toBeGreaterThanOrEqual(1);
    expect(await statuses()).toEqual(["failed"]);
    await pruneDestinationDeliveries(db(), new Date(clock + 29 * 86_400_000));
    expect(await statuses()).toEqual(["failed"]);
    await pruneDestinationDeliveries(db(), new Date(clock + 31 * 86_400_000));
    expect(await statuses()).toEqual([]);
  });
});

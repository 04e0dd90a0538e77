/**
 * Stop on trigger.dev: the Stop's answer never waits on the platform's API, and every
 * run it found running is cancelled at the platform exactly once afterwards, through the
 * outbox, whoever drains it: the loop of the process that took the Stop, another
 * process after that one died mid-drain, or the scheduled drain after an API outage.
 * A run that carries work the Stop did not cover when the drainer comes is left alone.
 * The fake trigger.dev API stands in for the platform; the cells are seeded as running
 * carriers with a recorded run id, as a carrier's claim leaves them.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TriggerBackend } from "@/backends/trigger";
import { log } from "@/config/log";
import { drainRunCancels, drainSettings } from "@/engine/run-cancel-drain";
import { startRunCancelLoop } from "@/engine/run-cancel-loop";
import { stopRuns } from "@/engine/stop";
import { deleteTable } from "@/services/tables";
import { countRunCancels } from "@/store/run-cancels/outbox";
import { apiClient } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type FakeTrigger, startFakeTrigger } from "../helpers/fake-trigger";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { waitTable } from "../helpers/tables";

let key: string;
let workspaceId: string;
let fake: FakeTrigger;
let backend: TriggerBackend;
const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
  ({ key, id: workspaceId } = await newWorkspace());
  fake = await startFakeTrigger();
  backend = new TriggerBackend({ accessToken: "tr_dev_cancel", baseURL: fake.url, log: log() });
});
afterAll(async () => {
  fake.releaseCancels();
  await fake.close();
});
beforeEach(async () => {
  fake.releaseCancels();
  fake.latency(0);
  fake.outage(0, 503);
  fake.cancelled.clear();
  fake.cancelCalls.clear();
  await db().execute(sql`delete from run_cancels`);
});

/** A table whose `rows` cells are running, each on its own trigger.dev run. */
async function runningCarriers(rows: number): Promise<{ tableId: string; runIds: string[] }> {
  const t = await waitTable(key, { groups: 1, ms: 10, rows });
  await apiClient(key).POST("/api/tables/{id}/runs", {
    params: { path: { id: t.id } },
    body: { mode: "all" },
  });
  const seeded = await queryRows<{ runId: string }>(
    db(),
    sql`update cells set status = 'running', started_at = now(),
               run_id = 'run_' || ${t.id} || '_' || row_position
         where table_id = ${t.id} returning run_id as "runId"`,
  );
  const runIds = seeded.map((r) => r.runId);
  expect(runIds).toHaveLength(rows);
  fake.addRuns(runIds);
  return { tableId: t.id, runIds };
}

const settings = (over: Parameters<typeof drainSettings>[0] = {}) =>
  drainSettings({ backoffMs: () => 20, ...over });

const everyCancelledOnce = (runIds: string[]) =>
  runIds.every((id) => fake.cancelled.get(id) === 1) && fake.cancelled.size === runIds.length;

describe("Stop on trigger.dev", () => {
  it("answers while the platform still holds every cancel, and the cells are cancelled by then", async () => {
    const { tableId, runIds } = await runningCarriers(40);
    fake.holdCancels();
    const loop = startRunCancelLoop({ db: db(), backend, log: log(), settings: settings() });
    try {
      const stopped = await stopRuns({ db: db(), backend }, { tableId });
      expect(stopped.cancelled).toBe(40);
      const [cells] = await queryRows<{ running: number }>(
        db(),
        sql`select count(*) filter (where status = 'running')::int as running from cells where table_id = ${tableId}`,
      );
      expect(cells?.running).toBe(0);
      // The Stop returned though no cancel has been answered: the drain is behind it.
      expect(fake.cancelled.size).toBe(0);
      expect(await waitFor(() => fake.heldCancels() === 10, 5_000)).toBe(true);
      fake.releaseCancels();
      expect(await waitFor(() => everyCancelledOnce(runIds), 10_000)).toBe(true);
      expect(await waitFor(async () => (await countRunCancels(db())) === 0, 5_000)).toBe(true);
      // One call per run: nothing was sent twice.
      expect([...fake.cancelCalls.values()].every((n) => n === 1)).toBe(true);
    } finally {
      await loop.stop();
    }
  });

  it("never has more cancel calls in flight than its concurrency", async () => {
    const { tableId, runIds } = await runningCarriers(30);
    await stopRuns({ db: db(), backend }, { tableId });
    fake.latency(20);
    fake.resetMaxInFlight();
    await drainRunCancels({
      db: db(),
      backend,
      log: log(),
      settings: settings({ concurrency: 4 }),
    });
    expect(fake.maxInFlight()).toBe(4);
    expect(everyCancelledOnce(runIds)).toBe(true);
  });

  it("starts calls no faster than its rate once the burst is spent", async () => {
    const { tableId, runIds } = await runningCarriers(12);
    await stopRuns({ db: db(), backend }, { tableId });
    const t0 = Date.now();
    await drainRunCancels({
      db: db(),
      backend,
      log: log(),
      settings: settings({ ratePerSecond: 20, burst: 2 }),
    });
    // 2 at once, then 10 more at 20/s: at least half a second.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(450);
    expect(everyCancelledOnce(runIds)).toBe(true);
  });

  it("a drainer killed mid-drain leaves its runs to the next one, and each run is cancelled once", async () => {
    const { tableId, runIds } = await runningCarriers(60);
    fake.holdCancels();
    await stopRuns({ db: db(), backend }, { tableId });
    const killed = new AbortController();
    const first = drainRunCancels({
      db: db(),
      backend,
      log: log(),
      settings: settings({ leaseMs: 1_000 }),
      signal: killed.signal,
    });
    expect(await waitFor(() => fake.heldCancels() === 10, 5_000)).toBe(true);
    const inFlight = [...fake.cancelCalls.keys()];
    // The process dies: it starts and writes nothing more; its calls reached the platform.
    killed.abort();
    fake.releaseCancels();
    await first;
    // The next drainer: what the dead one had taken comes back when its lease runs out.
    const next = () => drainRunCancels({ db: db(), backend, log: log(), settings: settings() });
    expect(
      await waitFor(async () => {
        await next();
        return (await countRunCancels(db())) === 0;
      }, 5_000),
    ).toBe(true);
    expect(everyCancelledOnce(runIds)).toBe(true);
    // Only a call the dead drainer had in flight was made a second time.
    const twice = [...fake.cancelCalls].filter(([, n]) => n > 1).map(([id]) => id);
    expect(twice.every((id) => inFlight.includes(id))).toBe(true);
  });

  it("an API outage (503) is retried until the platform recovers, then every run is cancelled", async () => {
    const { tableId, runIds } = await runningCarriers(25);
    fake.outage(60_000, 503, 0);
    const loop = startRunCancelLoop({
      db: db(),
      backend,
      log: log(),
      settings: settings(),
      pollMs: 50,
    });
    try {
      await stopRuns({ db: db(), backend }, { tableId });
      expect(
        await waitFor(async () => {
          const [r] = await queryRows<{ n: number }>(
            db(),
            sql`select count(*)::int as n from run_cancels where attempts >= 2`,
          );
          return r?.n === runIds.length;
        }, 10_000),
      ).toBe(true);
      expect(fake.cancelled.size).toBe(0);
      fake.outage(0, 503);
      expect(await waitFor(() => everyCancelledOnce(runIds), 10_000)).toBe(true);
      expect(await waitFor(async () => (await countRunCancels(db())) === 0, 5_000)).toBe(true);
    } finally {
      await loop.stop();
    }
  });

  it("a 429 is retried no sooner than its Retry-After", async () => {
    const { tableId, runIds } = await runningCarriers(1);
    fake.failNext(1, 429);
    await stopRuns({ db: db(), backend }, { tableId });
    const first = await drainRunCancels({ db: db(), backend, log: log(), settings: settings() });
    expect(first.retried).toBe(1);
    const [row] = await queryRows<{ waitS: number }>(
      db(),
      sql`select extract(epoch from due_at - now())::float8 as "waitS" from run_cancels`,
    );
    // The fake's induced failures say Retry-After: 0; the floor still spaces the retry.
    expect(row?.waitS).toBeGreaterThan(0);
    expect(
      await waitFor(async () => {
        await drainRunCancels({ db: db(), backend, log: log(), settings: settings() });
        return (await countRunCancels(db())) === 0;
      }, 5_000),
    ).toBe(true);
    expect(everyCancelledOnce(runIds)).toBe(true);
  });

  it("a run the platform no longer has leaves the outbox without retries", async () => {
    const { tableId } = await runningCarriers(3);
    await db().execute(
      sql`update cells set run_id = run_id || '_finished' where table_id = ${tableId}`,
    );
    await stopRuns({ db: db(), backend }, { tableId });
    const report = await drainRunCancels({ db: db(), backend, log: log(), settings: settings() });
    expect(report).toMatchObject({ gone: 3, cancelled: 0, retried: 0 });
    expect(await countRunCancels(db())).toBe(0);
  });

  it("a run whose row took on new work between the Stop and the drain is not cancelled", async () => {
    const { tableId, runIds } = await runningCarriers(2);
    await stopRuns({ db: db(), backend }, { tableId });
    // A run request after the Stop stamps the first row again: the run still holding that
    // row would carry the new cell, so cancelling it would strand the cell.
    const [first] = await queryRows<{ rowId: string }>(
      db(),
      sql`select row_id as "rowId" from cells where run_id = ${runIds[0] ?? ""}`,
    );
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: tableId } },
      body: { mode: "all", rowIds: [first?.rowId ?? ""] },
    });
    const report = await drainRunCancels({ db: db(), backend, log: log(), settings: settings() });
    expect(report).toMatchObject({ spared: 1, cancelled: 1 });
    expect(fake.cancelCalls.has(runIds[0] ?? "")).toBe(false);
    expect(fake.cancelled.get(runIds[1] ?? "")).toBe(1);
    expect(await countRunCancels(db())).toBe(0);
  });

  it("deleting a table leaves its running runs in the outbox, then they are cancelled", async () => {
    const { tableId, runIds } = await runningCarriers(5);
    const deleted = await deleteTable({ db: db(), backend, log: log(), workspaceId }, tableId);
    expect(deleted.ok).toBe(true);
    expect(await countRunCancels(db())).toBe(5);
    await drainRunCancels({ db: db(), backend, log: log(), settings: settings() });
    expect(everyCancelledOnce(runIds)).toBe(true);
  });
});

/**
 * A worker's connections do not grow with its concurrency: carriers hold their row locks
 * on a few shared lock sessions and write through a bounded pool, so 200 cells running at
 * once on one worker use at most 30 connections in all (its pool, the lock sessions, the
 * cancel LISTEN and graphile-worker's own pool).
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeBackend } from "@/backends/instance";
import { readEnv } from "@/config/env";
import { log } from "@/config/log";
import { LOCK_SESSIONS } from "@/engine/lock-sessions";
import { type RunningWorker, startWorker } from "@/server/worker-runtime";
import { rowLockKeyOf } from "@/store/cells/orphan-probe";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { waitTable } from "../helpers/tables";

const CONCURRENCY = 200;
let key: string;
let worker: RunningWorker;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  const env = readEnv();
  worker = await startWorker({
    url,
    driver: env.DATABASE_DRIVER,
    neonWsProxy: env.NEON_WS_PROXY,
    concurrency: CONCURRENCY,
    log: log(),
  });
  const ws = await newWorkspace();
  key = ws.key;
  // A window of 200 is the unlimited plan's.
  await getDatabase().db.execute(sql`update workspaces set plan = 'unlimited' where id = ${ws.id}`);
});

afterAll(async () => {
  await worker.stop();
  await closeBackend();
});

const count = async (q: ReturnType<typeof sql>) =>
  (await queryRows<{ n: number }>(getDatabase().db, q))[0]?.n ?? 0;

describe("worker connections", () => {
  it("200 running cells on one worker hold at most 30 connections, on LOCK_SESSIONS lock sessions", async () => {
    // Long, cancellable waits: every carrier holds its row while the count is taken.
    const t = await waitTable(key, { groups: 1, ms: 120_000, rows: CONCURRENCY });
    const run = await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { groupIds: ["g0"], mode: "all", window: CONCURRENCY },
    });
    expect(run.response.status).toBe(202);
    const running = () =>
      count(
        sql`select count(*)::int as n from cells where table_id = ${t.id} and status = 'running'`,
      );
    expect(await waitFor(async () => (await running()) === CONCURRENCY, 60_000)).toBe(true);
    const workerSessions = await count(
      sql`select count(*)::int as n from pg_stat_activity
           where datname = current_database() and application_name like 'cellflow-worker%'`,
    );
    // Every running carrier's row lock is held, on no more sessions than the hub has (the
    // key as engine/row-lock.ts makes it; pg_locks shows a bigint key in two halves).
    const [held] = await queryRows<{ locks: number; holders: number }>(
      getDatabase().db,
      sql`with keys as (
            select ${rowLockKeyOf(sql`c.table_id`, sql`c.row_id`)} as k
              from cells c where c.table_id = ${t.id} and c.status = 'running')
          select count(*)::int as locks, count(distinct l.pid)::int as holders
            from pg_locks l join keys on keys.k = (l.classid::bigint << 32) | l.objid::bigint
           where l.locktype = 'advisory' and l.granted and l.objsubid = 1`,
    );
    expect(await running()).toBe(CONCURRENCY);
    expect(workerSessions).toBeGreaterThan(0);
    expect(workerSessions).toBeLessThanOrEqual(30);
    expect(held?.locks).toBe(CONCURRENCY);
    expect(held?.holders).toBeLessThanOrEqual(LOCK_SESSIONS);

    // And the Stop reaches all of them: nothing in flight once it returned.
    const stop = await apiClient(key).POST("/api/tables/{id}/runs/cancel", {
      params: { path: { id: t.id } },
      body: {},
    });
    expect(dataOf(stop).cancelled).toBe(CONCURRENCY);
    expect(
      await count(
        sql`select count(*)::int as n from cells where table_id = ${t.id} and status in ('queued', 'running')`,
      ),
    ).toBe(0);
  }, 120_000);
});

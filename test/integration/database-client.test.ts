/**
 * createDatabase, under whichever driver the run uses (both lanes run this file).
 * DATABASE_URL may be a transaction-mode pooler, where session advisory locks and LISTEN
 * break; the pinned sessions must use the session (direct) URL. Told apart here by their
 * application_name, which each URL sets.
 */

import { createDatabase, type Database, queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { type SQL, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnv } from "@/config/env";
import { log } from "@/config/log";
import { listenForCancels } from "@/engine/cancellation";
import { ProgressWriter } from "@/engine/progress";
import { acquireRowLock, rowLockKey } from "@/engine/row-lock";
import { EventHub } from "@/events/hub";
import { insertRows } from "@/store/rows/insert";
import { createTable } from "@/store/tables/create";
import { useTestDatabase } from "../helpers/db";
import { resourcesOf } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";

const MAIN_APP = "cf-probe-main";
const SESSION_APP = "cf-probe-session";
let database: Database;
let tableId: string;
let rowId: string;
let testUrl: string;

function withAppName(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set("application_name", name);
  return u.toString();
}

beforeAll(async () => {
  const { url } = await useTestDatabase();
  testUrl = url;
  const ws = await newWorkspace();
  const t = await createTable(getDatabase().db, ws.id, {
    name: "session-url",
    schema: { columns: [{ id: "out", name: "Out", type: "text" }], groups: [] },
  });
  tableId = t.id;
  const rows = await insertRows(getDatabase().db, tableId, [{}]);
  rowId = rows?.[0]?.id as string;
  const env = readEnv();
  database = createDatabase({
    url: withAppName(url, MAIN_APP),
    sessionUrl: withAppName(url, SESSION_APP),
    driver: env.DATABASE_DRIVER,
    neonWsProxy: env.NEON_WS_PROXY,
    poolMax: 4,
  });
});

afterAll(async () => {
  await database?.close();
});

/** application_name of the sessions matching `where`, seen from another connection. */
async function appsOf(where: SQL): Promise<string[]> {
  const rows = await queryRows<{ app: string }>(
    getDatabase().db,
    sql`select a.application_name as app from pg_stat_activity a
        where a.datname = current_database() and ${where}`,
  );
  return rows.map((r) => r.app);
}

describe("either driver", () => {
  it("returns bigint (count) as a number", async () => {
    const [row] = await queryRows<{ n: unknown; big: unknown }>(
      database.db,
      sql`select count(*) as n, 9007199254740991::bigint as big`,
    );
    expect(row).toEqual({ n: 1, big: Number.MAX_SAFE_INTEGER });
    const client = await database.pool.connect();
    try {
      const res = await client.query("select count(*) as n");
      expect(res.rows[0]?.n).toBe(1);
    } finally {
      client.release();
    }
  });
});

describe("a separate session URL", () => {
  it("queries go to DATABASE_URL", async () => {
    const [row] = await queryRows<{ app: string }>(
      database.db,
      sql`select current_setting('application_name') as app`,
    );
    expect(row?.app).toBe(MAIN_APP);
  });

  it("the row lock is held by a session on the session URL", async () => {
    const lock = await acquireRowLock(resourcesOf(database), tableId, rowId);
    expect(lock).not.toBeNull();
    try {
      // An advisory lock on one bigint key shows as classid (high half), objid (low half).
      const holders = await appsOf(
        sql`a.pid in (select l.pid from pg_locks l
                      where l.locktype = 'advisory' and l.granted and l.objsubid = 1
                        and ((l.classid::int8 << 32) | l.objid::int8) = ${rowLockKey(tableId, rowId)}::int8)`,
      );
      expect(holders).toEqual([SESSION_APP]);
      // The holder writes through the pool on the session URL (the direct endpoint).
      const [row] = await queryRows<{ app: string }>(
        lock?.db ?? database.db,
        sql`select current_setting('application_name') as app`,
      );
      expect(row?.app).toBe(SESSION_APP);
    } finally {
      await lock?.release();
    }
  });

  it("a pinned session prepares named statements, planned generically", async () => {
    const lock = await acquireRowLock(resourcesOf(database), tableId, rowId);
    try {
      const session = lock?.db ?? database.db;
      const probe = sql`select ${41}::int + 1 as x`;
      expect(await queryRows(session, probe, { prepare: true })).toEqual([{ x: 42 }]);
      const [row] = await queryRows<{ named: number; mode: string }>(
        session,
        sql`select (select count(*) from pg_prepared_statements
                    where left(name, 3) = 'cf_' and statement = 'select $1::int + 1 as x') as named,
                   current_setting('plan_cache_mode') as mode`,
      );
      expect(row?.named).toBe(1);
      expect(row?.mode).toBe("force_generic_plan");
    } finally {
      await lock?.release();
    }
  });

  it("the cancel listener LISTENs on the session URL", async () => {
    const hub = new EventHub(database.pool, log());
    const listener = listenForCancels(hub, log());
    await listener.ready;
    try {
      const listening = await appsOf(sql`a.query ilike 'listen %'`);
      expect(listening).toContain(SESSION_APP);
      expect(listening).not.toContain(MAIN_APP);
    } finally {
      await listener.stop();
      await hub.close();
    }
  });
});

describe("a server connection lost mid-use", () => {
  it("a transaction whose backend dies between statements fails, and the process lives on", async () => {
    // Between two statements the client has no query to hand the server's FATAL to, so it
    // emits 'error'; without a listener that is an uncaught exception (a worker crash
    // when Postgres restarts), which fails this file.
    const outcome = await database.db
      .transaction(async (tx) => {
        const [me] = await queryRows<{ pid: number }>(tx, sql`select pg_backend_pid() as pid`);
        await getDatabase().db.execute(sql`select pg_terminate_backend(${me?.pid ?? 0})`);
        // Wait for the termination to arrive on this connection, not for a time.
        for (;;) await tx.execute(sql`select 1`);
      })
      .then(
        () => "committed",
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
    expect(outcome).not.toBe("committed");
    const [fresh] = await queryRows<{ one: number }>(database.db, sql`select 1 as one`);
    expect(fresh?.one).toBe(1);
  });

  it("a pinned session whose backend dies is refused by its next statement, without a crash", async () => {
    const client = await database.pool.connect();
    const { rows } = await client.query("select pg_backend_pid() as pid");
    await getDatabase().db.execute(sql`select pg_terminate_backend(${rows[0]?.pid ?? 0})`);
    let failed = false;
    while (!failed)
      failed = await client.query("select 1").then(
        () => false,
        () => true,
      );
    client.release(true);
    const again = await database.pool.connect();
    await expect(again.query("select 1 as one")).resolves.toMatchObject({ rows: [{ one: 1 }] });
    again.release();
  });

  it("a live-progress write that fails is reported, not an unhandled rejection that ends the worker", async () => {
    const gone = createDatabase({ url: testUrl, poolMax: 1 });
    await gone.close();
    const failed = new Promise<unknown>((resolve) => {
      const writer = new ProgressWriter(
        gone.db,
        { rowId, groupId: "g", executionId: "ex2_x", attempt: 1 },
        () => {},
        resolve,
      );
      writer.blockStarted("b1");
    });
    await expect(failed).resolves.toBeInstanceOf(Error);
  });
});

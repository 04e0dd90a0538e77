/**
 * A fan-out's records grow its write-ahead log linearly: each item that ends is one row of
 * its own, never a rewrite of the records before it. A foreach of 2,000 items whose results
 * are 1 KB each adds at most 10 MB of WAL (`pg_stat_wal.wal_bytes`) for the whole run — its
 * records, its child runs, the block's own 2 MB output and the cell's end — where rewriting
 * one document per item wrote about N²/2 KB (≈ 2 GB). On a cluster of its own, so no other
 * test file's writes are counted.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { queryRows } from "@db/client";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "@db/embedded";
import { closeDatabase, getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { closeBackend } from "@/backends/instance";
import { readEnv } from "@/config/env";
import { log } from "@/config/log";
import { startWorker } from "@/server/worker-runtime";
import { apiClient, dataOf } from "../helpers/api";
import { migratedDatabase } from "../helpers/databases";
import { runToEnd } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { freePort, waitFor } from "../helpers/processes";
import { workflowTable } from "../helpers/tables";

const ITEMS = Number(process.env.WAL_TEST_ITEMS ?? 2_000);
const MB = 1024 * 1024;

let server: EmbeddedPostgres;
let dir: string;
let url: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-wal-"));
  fs.chmodSync(dir, 0o777);
  server = await startEmbeddedPostgres({ dataDir: dir, port: await freePort() });
  url = await migratedDatabase(server.url, "wal");
  await closeDatabase();
  process.env.DATABASE_URL = url;
});
afterAll(async () => {
  await closeDatabase();
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * The cluster's WAL so far, once every session of the database has ended: a backend's
 * statistics reach `pg_stat_wal` at its exit at the latest.
 */
async function walBytes(): Promise<{ stat: number; lsn: string }> {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    const quiet = await waitFor(async () => {
      const res = await admin.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where datname = 'wal'",
      );
      return res.rows[0]?.n === 0;
    }, 20_000);
    expect(quiet).toBe(true);
    const res = await admin.query<{ stat: string; lsn: string }>(
      "select wal_bytes::text as stat, pg_current_wal_insert_lsn()::text as lsn from pg_stat_wal",
    );
    return { stat: Number(res.rows[0]?.stat), lsn: res.rows[0]?.lsn ?? "" };
  } finally {
    await admin.end();
  }
}

async function lsnDiff(after: string, before: string): Promise<number> {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    const res = await admin.query<{ d: string }>("select pg_wal_lsn_diff($1, $2)::text as d", [
      after,
      before,
    ]);
    return Number(res.rows[0]?.d);
  } finally {
    await admin.end();
  }
}

it(`a foreach of ${ITEMS} items with 1 KB results adds at most 10 MB of WAL`, async () => {
  const { key } = await newWorkspace();
  // Each item's result: 1 KB of random digits (about 60 × 18), which no compression shrinks much.
  const child = dataOf(
    await apiClient(key).POST("/api/workflows", {
      body: {
        name: "kilobyte",
        definition: {
          blocks: [
            {
              id: "kb",
              type: "transform",
              expression: "$substring($join([1..60].($string($random()))), 0, 1024)",
            },
          ],
        },
      },
    }),
  ).id;
  const { tableId } = await workflowTable(key, {
    workflow: {
      inputs: [],
      blocks: [
        {
          id: "each",
          type: "foreach",
          items: `[0..${ITEMS - 1}]`,
          workflowId: child,
          concurrency: 10,
        },
      ],
    },
    outputs: { ok: "each.ok" },
  });
  const env = readEnv();
  const start = () => startWorker({ url, driver: env.DATABASE_DRIVER, concurrency: 2, log: log() });
  // Once before counting: a first worker installs graphile-worker's schema.
  await (await start()).stop();
  await closeBackend();
  await closeDatabase();
  const before = await walBytes();

  const worker = await start();
  try {
    expect(await runToEnd(key, tableId, { mode: "all" }, 600_000)).toBe("completed");
    const [row] = await queryRows<{ ok: number }>(
      getDatabase().db,
      sql`select (data->>'ok')::int as ok from rows where table_id = ${tableId}`,
    );
    expect(row?.ok).toBe(ITEMS);
  } finally {
    await worker.stop();
    await closeBackend();
    await closeDatabase();
  }
  const after = await walBytes();
  const stat = after.stat - before.stat;
  const lsn = await lsnDiff(after.lsn, before.lsn);
  console.log(
    `foreach of ${ITEMS} items × 1 KB: pg_stat_wal.wal_bytes +${(stat / MB).toFixed(2)} MB, WAL position +${(lsn / MB).toFixed(2)} MB`,
  );
  expect(stat).toBeGreaterThan(0);
  expect(stat).toBeLessThanOrEqual(10 * MB);
}, 900_000);

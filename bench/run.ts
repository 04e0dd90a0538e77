/**
 * `npm run bench` (first cut): W1 — rows × 2 chained no-op groups through the real engine
 * (dispatcher, one worker process in-process, window 50) against graphile-worker no-op
 * jobs in the same run. Prints cells/s, the peer's jobs/s and their ratio. The full
 * workload set (W2–W4) lands with the benchmark issue.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { Logger, makeWorkerUtils, run } from "graphile-worker";
import pg from "pg";
import { createDatabase, queryRows } from "../db/client";
import { ensureDatabase, startEmbeddedPostgres } from "../db/embedded";
import { runMigrations } from "../db/migrate";
import { LocalBackend } from "../src/backends/local";
import { log } from "../src/config/log";
import { startRun } from "../src/engine/dispatcher";
import { startWorker } from "../src/server/worker-runtime";
import { insertRows } from "../src/store/rows/insert";
import { createTable } from "../src/store/tables/create";
import { createWorkflow } from "../src/store/workflows/create";
import { createWorkspace } from "../src/store/workspaces/create";

const ROWS = Number(process.env.BENCH_ROWS ?? 2_000);

/** Every query any pg client in this process sends, lock calls included. */
let queries = 0;
const originalQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
  queries++;
  return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;
const PEER_JOBS = Number(process.env.BENCH_PEER_JOBS ?? 4_000);

async function engineRun(url: string): Promise<{
  cellsPerSec: number;
  cells: number;
  roundTripsPerCell: number;
  commitsPerCell: number;
}> {
  const database = createDatabase({ url, poolMax: 10 });
  const db = database.db;
  const ws = await createWorkspace(db, "bench", "pro");
  const wf = await createWorkflow(db, ws.id, {
    name: "noop",
    definition: { inputs: [], blocks: [{ id: "v", type: "transform", expression: "1" }] },
  });
  const table = await createTable(db, ws.id, {
    name: "w1",
    schema: {
      columns: [
        { id: "a", name: "A", type: "number" },
        { id: "b", name: "B", type: "number" },
      ],
      groups: [
        {
          id: "ga",
          name: "GA",
          kind: "workflow",
          workflowId: wf.id,
          version: "live",
          inputs: {},
          outputs: [{ columnId: "a", from: "v" }],
          dependsOn: [],
          autoRun: false,
        },
        {
          id: "gb",
          name: "GB",
          kind: "workflow",
          workflowId: wf.id,
          version: "live",
          inputs: { x: "a" },
          outputs: [{ columnId: "b", from: "v" }],
          dependsOn: [],
          autoRun: false,
        },
      ],
    },
  });
  for (let i = 0; i < ROWS; i += 1000)
    await insertRows(
      db,
      table.id,
      Array.from({ length: Math.min(1000, ROWS - i) }, () => ({})),
    );
  const worker = await startWorker({
    url,
    driver: "pg",
    concurrency: Number(process.env.BENCH_CONCURRENCY ?? 50),
    log: log(),
  });
  const backend = new LocalBackend(url);
  const commitsBefore = await commits(db);
  const queriesBefore = queries;
  const started = Date.now();
  const { dispatchId, stamped } = await startRun(db, backend, {
    tableId: table.id,
    groupIds: ["ga", "gb"],
    mode: "all",
    rowIds: null,
    limit: null,
    window: 50,
  });
  for (;;) {
    const [d] = await queryRows<{ status: string }>(
      db,
      sql`select status from dispatches where id = ${dispatchId}`,
    );
    if (d?.status !== "active") break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const secs = (Date.now() - started) / 1000;
  const roundTrips = queries - queriesBefore;
  const committed = (await commits(db)) - commitsBefore;
  await worker.stop();
  await backend.close();
  await database.close();
  return {
    cellsPerSec: stamped / secs,
    cells: stamped,
    roundTripsPerCell: roundTrips / stamped,
    commitsPerCell: committed / stamped,
  };
}

async function commits(db: ReturnType<typeof createDatabase>["db"]): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`select xact_commit::bigint as n from pg_stat_database where datname = current_database()`,
  );
  return Number(row?.n ?? 0);
}

async function peerRun(url: string): Promise<number> {
  // Silent, as the engine's worker is: console logging per job would slow the peer down.
  const logger = new Logger(() => () => {});
  const utils = await makeWorkerUtils({ connectionString: url, logger });
  await utils.migrate();
  let done = 0;
  let finish: () => void = () => {};
  const all = new Promise<void>((r) => {
    finish = r;
  });
  const runner = await run({
    connectionString: url,
    concurrency: 50,
    noHandleSignals: true,
    pollInterval: 1000,
    logger,
    taskList: {
      noop: async () => {
        done++;
        if (done === PEER_JOBS) finish();
      },
    },
  });
  const started = Date.now();
  for (let i = 0; i < PEER_JOBS; i += 500) {
    await utils.addJobs(
      Array.from({ length: Math.min(500, PEER_JOBS - i) }, () => ({
        identifier: "noop",
        payload: {},
      })),
    );
  }
  await all;
  const rate = PEER_JOBS / ((Date.now() - started) / 1000);
  await runner.stop();
  await utils.release();
  return rate;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-bench-"));
  fs.chmodSync(dir, 0o777);
  const server = await startEmbeddedPostgres({
    dataDir: dir,
    port: 54000 + Math.floor(Math.random() * 900),
  });
  try {
    const engineUrl = await ensureDatabase(server.url, "bench_engine");
    const peerUrl = await ensureDatabase(server.url, "bench_peer");
    await runMigrations(engineUrl);
    const peer = await peerRun(peerUrl);
    const engine = await engineRun(engineUrl);
    const result = {
      w1: {
        rows: ROWS,
        cells: engine.cells,
        cellsPerSec: Math.round(engine.cellsPerSec),
        peerJobsPerSec: Math.round(peer),
        ratio: +(engine.cellsPerSec / peer).toFixed(3),
        roundTripsPerCell: +engine.roundTripsPerCell.toFixed(2),
        commitsPerCell: +engine.commitsPerCell.toFixed(2),
      },
    };
    process.stdout.write(
      `W1  cells/s ${result.w1.cellsPerSec}  peer jobs/s ${result.w1.peerJobsPerSec}  ratio ${result.w1.ratio}  ` +
        `round trips/cell ${result.w1.roundTripsPerCell}  commits/cell ${result.w1.commitsPerCell}\n`,
    );
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

void main();

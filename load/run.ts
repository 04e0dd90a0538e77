/**
 * `npm run load`: the API under load while a dispatch runs. Starts its own embedded
 * PostgreSQL in a temp directory, the API (load/server.ts) and worker processes, times a
 * dispatch with no load (the baseline), then the same dispatch again while autocannon
 * reads and writes rows and SSE clients follow the table; at the end every client's event
 * ids are compared with the table's events in the database. Prints a summary and writes
 * JSON (LOAD_OUTPUT, default a file in the OS temp directory). See docs/load.md.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDatabase, type Database } from "@db/client";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "@db/embedded";
import type { Schemas } from "@/client/cellflow-client";
import { sleep } from "@/domain/sleep";
import { migratedDatabase } from "../test/helpers/databases";
import { freePort } from "../test/helpers/processes";
import { coresBetween, sampleCpu } from "./cpu";
import { printSummary } from "./report";
import {
  type Api,
  answered,
  api,
  type Child,
  eventIds,
  loadTable,
  notCompleted,
  sequencedUpTo,
  startChild,
  tenant,
  timedRun,
} from "./setup";
import { completeness } from "./sse";
import { type SseFleet, startSseFleet } from "./sse-fleet";
import { startTraffic } from "./traffic";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const CELLS = env("LOAD_CELLS", 10_000);
const SSE_CLIENTS = env("LOAD_SSE_CLIENTS", 200);
const CONNECTIONS = env("LOAD_CONNECTIONS", 10);
const WRITE_CONNECTIONS = env("LOAD_WRITE_CONNECTIONS", 2);
// Offered requests per second per group (0: closed loop, as fast as the connections go).
const READ_RATE = env("LOAD_READ_RATE", 25);
const WRITE_RATE = env("LOAD_WRITE_RATE", 5);
const SECONDS = env("LOAD_SECONDS", 30);
const WORKERS = env("LOAD_WORKERS", 1);
const CONCURRENCY = env("LOAD_WORKER_CONCURRENCY", 20);
const BASELINE = process.env.LOAD_BASELINE !== "0";
const say = (line: string) => process.stdout.write(`${line}\n`);

async function stats(port: number): Promise<{ sequenceTransactions: number; cpuSeconds: number }> {
  const res = await fetch(`http://127.0.0.1:${port}/__load/stats`);
  return (await res.json()) as { sequenceTransactions: number; cpuSeconds: number };
}

/** Row ids and the cursors of every page of 100, for the read traffic. */
async function readTargets(a: Api, tableId: string) {
  const rowIds: string[] = [];
  const pageCursors: (string | null)[] = [];
  let cursor: string | null = null;
  do {
    pageCursors.push(cursor);
    const page: Schemas["RowPage"] = answered(
      "rows",
      await a.client.GET("/api/tables/{id}/rows", {
        params: { path: { id: tableId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } },
      }),
    );
    rowIds.push(...page.rows.map((r) => r.id));
    cursor = page.nextCursor;
  } while (cursor);
  return { rowIds, pageCursors };
}

/** Waits until every client has the table's newest event, and that newest one held still. */
async function settle(database: Database, tableId: string, fleet: SseFleet) {
  const deadline = Date.now() + 120_000;
  let newest = -1;
  for (;;) {
    const now = await sequencedUpTo(database, tableId);
    const behind = await fleet.behind(now);
    if (behind === 0 && now === newest) return;
    if (Date.now() > deadline) {
      say(`${behind} SSE clients still behind position ${now} after 120 s; counting as is`);
      return;
    }
    newest = behind === 0 ? now : -1;
    await sleep(250);
  }
}

/** What the script started: `stopRig` stops whatever is there, however the script ends. */
interface Rig {
  dir: string;
  children: Child[];
  fleet?: SseFleet;
  database?: Database;
  server?: EmbeddedPostgres;
}

type TimedRun = Awaited<ReturnType<typeof timedRun>>;

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cellflow-load-"));
  fs.chmodSync(dir, 0o777);
  const output =
    process.env.LOAD_OUTPUT ?? path.join(os.tmpdir(), `cellflow-load-${Date.now()}.json`);
  const rig: Rig = { dir, children: [] };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void stopRig(rig).finally(() => process.exit(130)));
  }
  try {
    const loadBefore = os.loadavg();
    const { database, server, port, key } = await startRig(rig);
    const a = api(port, key);
    const rows = Math.ceil(CELLS / 2);
    const cells = rows * 2;
    say(
      `load: ${cells} cells (${rows} rows × 2 groups), ${SSE_CLIENTS} SSE clients, ${CONNECTIONS} connections per read group at ${READ_RATE || "max"} req/s, ${WRITE_CONNECTIONS} per write group at ${WRITE_RATE || "max"} req/s, at least ${SECONDS} s`,
    );

    const loaded = await loadTable(a, "loaded", rows);
    let baseline: TimedRun | undefined;
    if (BASELINE) {
      const quiet = await loadTable(a, "baseline", rows, loaded.workflowIds);
      baseline = await timedRun(a, database, quiet.tableId, cells);
      say(
        `baseline (no load): ${baseline.cellsPerSec.toFixed(1)} cells/s in ${baseline.seconds.toFixed(1)} s`,
      );
    }
    const tableId = loaded.tableId;
    const m = await runUnderLoad(rig, { a, database, server, port, key, tableId, cells });
    const cpuSeconds = m.statsAfter.cpuSeconds - m.statsBefore.cpuSeconds;
    const result = {
      at: new Date().toISOString(),
      machine: { cpus: os.cpus().length, loadAvgBefore: loadBefore, loadAvgAfter: os.loadavg() },
      knobs: {
        cells,
        sseClients: SSE_CLIENTS,
        readConnections: CONNECTIONS,
        writeConnections: WRITE_CONNECTIONS,
        readRatePerGroup: READ_RATE,
        writeRatePerGroup: WRITE_RATE,
        minSeconds: SECONDS,
        workers: WORKERS,
        workerConcurrency: CONCURRENCY,
      },
      loadSeconds: +m.loadSeconds.toFixed(1),
      dispatch: {
        baselineCellsPerSec: baseline ? +baseline.cellsPerSec.toFixed(1) : null,
        underLoadCellsPerSec: +m.run.cellsPerSec.toFixed(1),
        status: m.run.status,
        cellsNotCompleted: await notCompleted(database, tableId),
      },
      http: m.groups,
      sse: m.sse,
      sequenceTransactionsDuringLoad:
        m.statsAfter.sequenceTransactions - m.statsBefore.sequenceTransactions,
      cpuCoresDuringLoad: m.cpuCores,
      apiCpuShare: +(cpuSeconds / m.loadSeconds).toFixed(2),
    };
    printSummary(result, say);
    fs.writeFileSync(output, `${JSON.stringify(result, null, 2)}\n`);
    say(`JSON: ${output}`);
  } finally {
    await stopRig(rig);
  }
}

async function stopRig(rig: Rig): Promise<void> {
  await rig.fleet?.terminate();
  await Promise.allSettled(rig.children.map((c) => c.stop()));
  await rig.database?.close().catch(() => {});
  await rig.server?.stop();
  fs.rmSync(rig.dir, { recursive: true, force: true });
}

/** Postgres (migrated, with a tenant), the API and the workers. */
async function startRig(
  rig: Rig,
): Promise<{ database: Database; server: EmbeddedPostgres; port: number; key: string }> {
  const server = await startEmbeddedPostgres({
    dataDir: rig.dir,
    port: await freePort(),
    // Workers at concurrency 50 keep ~107 connections each; the API 20 and its LISTEN.
    settings: { max_connections: String(100 + WORKERS * 120) },
  });
  rig.server = server;
  const url = await migratedDatabase(server.url, "cellflow_load");
  const database = createDatabase({ url, poolMax: 4 });
  rig.database = database;
  const key = await tenant(database);
  const dbEnv = { DATABASE_URL: url, CELLFLOW_SECRET_KEY: "a".repeat(64) };
  const apiServer = await startChild(
    "load/server.ts",
    { ...dbEnv, PORT: "0" },
    /listening on (\d+)/,
  );
  rig.children.push(apiServer);
  const port = Number(apiServer.match[1]);
  for (let i = 0; i < WORKERS; i++)
    rig.children.push(
      await startChild(
        "src/server/worker.ts",
        { ...dbEnv, WORKER_CONCURRENCY: String(CONCURRENCY) },
        /worker ready/,
      ),
    );
  return { database, server, port, key };
}

/**
 * The dispatch timed again while the SSE clients follow the table and the traffic reads
 * and writes rows, for at least SECONDS; then the clients settle and are compared.
 */
async function runUnderLoad(
  rig: Rig,
  o: {
    a: Api;
    database: Database;
    server: EmbeddedPostgres;
    port: number;
    key: string;
    tableId: string;
    cells: number;
  },
) {
  const { a, database, port, key, tableId } = o;
  const targets = await readTargets(a, tableId);
  const base = await sequencedUpTo(database, tableId);
  const fleet = startSseFleet({ port, tableId, key, clients: SSE_CLIENTS });
  rig.fleet = fleet;
  await fleet.connected;
  say(`${SSE_CLIENTS} SSE clients connected`);
  const statsBefore = await stats(port);

  const traffic = startTraffic({
    port,
    key,
    tableId,
    ...targets,
    readConnections: CONNECTIONS,
    writeConnections: WRITE_CONNECTIONS,
    readRate: READ_RATE,
    writeRate: WRITE_RATE,
  });
  const cpuPids: Record<string, number> = { loadScript: process.pid };
  rig.children.forEach((c, i) => {
    if (c.child.pid) cpuPids[i === 0 ? "api" : `worker${i}`] = c.child.pid;
  });
  const cpuBefore = sampleCpu(cpuPids, o.server.pid);
  const loadStarted = performance.now();
  const run = await timedRun(a, database, tableId, o.cells);
  say(
    `under load: ${run.cellsPerSec.toFixed(1)} cells/s in ${run.seconds.toFixed(1)} s (${run.status})`,
  );
  const remaining = SECONDS * 1000 - (performance.now() - loadStarted);
  if (remaining > 0) await sleep(remaining);
  const cpuCores = coresBetween(cpuBefore, sampleCpu(cpuPids, o.server.pid));
  const groups = await traffic.stop();
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  await settle(database, tableId, fleet);
  const statsAfter = await stats(port);
  const sse = completeness(await fleet.finish(), await eventIds(database, tableId, base));
  return { run, cpuCores, groups, loadSeconds, statsBefore, statsAfter, sse };
}

main().catch((err: unknown) => {
  process.stderr.write(
    `load failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});

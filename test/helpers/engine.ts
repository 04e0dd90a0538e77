import { createDatabase, type Database, queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll } from "vitest";
import { closeBackend } from "@/backends/instance";
import { LocalBackend } from "@/backends/local";
import type { TaskBackend } from "@/backends/port";
import { readEnv } from "@/config/env";
import { log } from "@/config/log";
import { type Engine, type EngineResources, engineResources } from "@/engine/handle";
import { type RedriveEngine, redriveOrphans } from "@/engine/redrive";
import { assembleEngine } from "@/runtime/engine";
import type { Runtime } from "@/runtime/maintenance";
import { type RunningWorker, startWorker } from "@/server/worker-runtime";
import { apiClient, dataOf, startedRun } from "./api";
import { waitFor } from "./processes";

/** An in-process worker on the test database, stopped after the file. */
export async function useWorker(url: string, concurrency = 10): Promise<RunningWorker> {
  const env = readEnv();
  const worker = await startWorker({
    url,
    driver: env.DATABASE_DRIVER,
    neonWsProxy: env.NEON_WS_PROXY,
    concurrency,
    log: log(),
  });
  afterAll(async () => {
    await worker.stop();
    await closeBackend();
  });
  return worker;
}

const resources = new WeakMap<Database, EngineResources>();

/**
 * The shared pieces of the engine over `database` (batchers, lock sessions, caches): one
 * set per database, as a process has, whichever test builds a handle over it.
 */
export function resourcesOf(database: Database): EngineResources {
  let r = resources.get(database);
  if (!r) {
    r = engineResources(database);
    resources.set(database, r);
  }
  return r;
}

/**
 * The engine handle as the composition root assembles it for `runtime` (default local),
 * over the test database unless `database` says otherwise, with the test seams (`pause`,
 * `maxRounds`, `chain`) on top. Its limiter is the one the environment selects: Postgres.
 */
export function engineDeps(
  parts: { backend: TaskBackend; database?: Database; runtime?: Runtime } & Partial<
    Pick<Engine, "pause" | "maxRounds" | "chain">
  >,
): Engine {
  const { backend, database = getDatabase(), runtime = "local", ...seams } = parts;
  const assembled = assembleEngine({
    runtime,
    env: readEnv(),
    database,
    backend,
    log: log(),
    resources: resourcesOf(database),
  });
  return { ...assembled.engine, ...seams };
}

/** What a re-drive pass runs with over `database` (another machine's, with its own). */
export function redriveEngine(
  parts: Omit<RedriveEngine, "locks" | "advances" | "log"> & { log?: RedriveEngine["log"] },
): RedriveEngine {
  return { ...resourcesOf(parts.database), log: log(), ...parts };
}

export async function cellCounts(tableId: string): Promise<Record<string, number>> {
  const rows = await queryRows<{ status: string; n: number }>(
    getDatabase().db,
    sql`select status, count(*)::int as n from cells where table_id = ${tableId} group by status`,
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export async function waitForDispatch(
  key: string,
  tableId: string,
  dispatchId: string,
  timeoutMs = 60_000,
): Promise<string> {
  let status = "";
  const done = await waitFor(
    async () => {
      const res = await apiClient(key).GET("/api/tables/{id}/runs/{dispatchId}", {
        params: { path: { id: tableId, dispatchId } },
      });
      status = dataOf(res).status;
      return status !== "active";
    },
    timeoutMs,
    50,
  );
  if (!done) throw new Error(`dispatch ${dispatchId} still active after ${timeoutMs} ms`);
  return status;
}

/**
 * After a worker was SIGKILLed in the middle of a table's one cell: a re-drive pass (from
 * connections of its own, like another machine's) requeues the cell, a new worker in this
 * process carries it, and the cell completes. False when it did not within the bounds.
 */
export async function useHealedCell(url: string, tableId: string): Promise<boolean> {
  const machine = { database: createDatabase({ url, poolMax: 3 }), backend: new LocalBackend(url) };
  let requeued = false;
  try {
    requeued = await waitFor(
      async () => (await redriveOrphans(redriveEngine(machine))).requeued === 1,
      10_000,
    );
  } finally {
    await machine.backend.close();
    await machine.database.close();
  }
  await useWorker(url, 2);
  return requeued && waitFor(async () => (await cellCounts(tableId)).completed === 1, 30_000);
}

/** Starts a run of the table (default: all of it) and waits until it is no longer active. */
export async function runToEnd(
  key: string,
  tableId: string,
  body: { mode: "all" | "incomplete" | "new" | "failed"; resume?: boolean } = { mode: "all" },
  timeoutMs?: number,
): Promise<string> {
  const run = startedRun(
    await apiClient(key).POST("/api/tables/{id}/runs", { params: { path: { id: tableId } }, body }),
  );
  return waitForDispatch(key, tableId, run.dispatchId, timeoutMs);
}

/** Shared pieces of the benchmark: a database per run, a workspace, tables, a worker. */

import { monitorEventLoopDelay } from "node:perf_hooks";
import { type Database, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import pg from "pg";
import type { WorkflowDefinition } from "@/contracts/workflow";
import { sleep } from "@/domain/sleep";
import { insertRows } from "@/store/rows/insert";
import { createTable } from "@/store/tables/create";
import { createWorkflow } from "@/store/workflows/create";
import { createWorkspace } from "@/store/workspaces/create";
import { freshDatabase } from "../test/helpers/databases";

/** Every query any pg client in this process sends, lock calls included. */
export const counter = { queries: 0 };
/** The benchmark's own polling, subtracted from the engine's figures. */
export const polls = { queries: 0 };
const originalQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
  counter.queries++;
  return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

let dbCounter = 0;

/** A fresh, migrated database on the bench server, named for this process and run. */
export function benchDatabase(adminUrl: string): Promise<{ url: string; database: Database }> {
  return freshDatabase(adminUrl, `bench_${process.pid}_${dbCounter++}`, { poolMax: 20 });
}

export async function commits(database: Database): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    database.db,
    sql`select xact_commit::bigint as n from pg_stat_database where datname = current_database()`,
  );
  return Number(row?.n ?? 0);
}

export interface GroupSpec {
  id: string;
  definition: WorkflowDefinition;
  inputs?: Record<string, string>;
  output: { columnId: string; from: string };
}

/** A pro-plan workspace, a table with the given number-typed columns and groups, and rows. */
export async function benchTable(
  database: Database,
  columns: string[],
  groups: GroupSpec[],
  rows: Record<string, unknown>[],
): Promise<string> {
  const db = database.db;
  const ws = await createWorkspace(db, "bench", "unlimited");
  const built = [];
  for (const g of groups) {
    const wf = await createWorkflow(db, ws.id, { name: g.id, definition: g.definition });
    built.push({
      id: g.id,
      name: g.id,
      kind: "workflow" as const,
      workflowId: wf.id,
      version: "live" as const,
      inputs: g.inputs ?? {},
      outputs: [g.output],
      dependsOn: [],
      autoRun: false,
    });
  }
  const table = await createTable(db, ws.id, {
    name: "bench",
    schema: {
      columns: columns.map((id) => ({ id, name: id, type: "json" as const })),
      groups: built,
    },
  });
  for (let i = 0; i < rows.length; i += 1000)
    await insertRows(db, table.id, rows.slice(i, i + 1000));
  return table.id;
}

export async function waitForDispatch(
  database: Database,
  dispatchId: string,
  pollMs = 10,
): Promise<void> {
  for (;;) {
    polls.queries++;
    const [d] = await queryRows<{ status: string }>(
      database.db,
      sql`select status from dispatches where id = ${dispatchId}`,
    );
    if (d?.status !== "active") return;
    await sleep(pollMs);
  }
}

/** Fails loudly unless every cell of the dispatch is terminal exactly once. */
export async function checkTerminalOnce(
  database: Database,
  tableId: string,
  expected: number,
): Promise<void> {
  const [row] = await queryRows<{ cells: number; dup: number; open: number }>(
    database.db,
    sql`select (select count(*)::int from cells where table_id = ${tableId} and status in ('completed', 'error', 'cancelled')) as cells,
               (select count(*)::int from cells where table_id = ${tableId} and status in ('queued', 'running')) as open,
               (select count(*)::int from (
                  select 1 from events where table_id = ${tableId} and kind = 'cell'
                     and data->>'status' in ('completed', 'error', 'cancelled')
                   group by data->>'rowId', data->>'groupId', data->>'executionId' having count(*) > 1) x) as dup`,
  );
  if (!row || row.cells !== expected || row.dup !== 0 || row.open !== 0) {
    throw new Error(
      `invariant broken: ${JSON.stringify(row)} (expected ${expected} terminal cells, each once)`,
    );
  }
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
}

export const noop = (id: string): WorkflowDefinition => ({
  inputs: [],
  blocks: [{ id, type: "transform", expression: "1" }],
});

/** Resets pg_stat_statements (the server must preload it: BENCH_PROFILE=1). */
export async function startStatementProfile(database: Database): Promise<void> {
  await database.db.execute(sql`create extension if not exists pg_stat_statements`);
  await database.db.execute(sql`select pg_stat_statements_reset()`);
}

/** The statements that cost Postgres the most time in this database since the reset. */
export async function printStatementProfile(
  database: Database,
  say: (line: string) => void,
): Promise<void> {
  const top = await queryRows<{ calls: number; plan: number; exec: number; query: string }>(
    database.db,
    sql`select calls::int, total_plan_time as plan, total_exec_time as exec,
               regexp_replace(left(query, 140), '[[:space:]]+', ' ', 'g') as query
          from pg_stat_statements
         where dbid = (select oid from pg_database where datname = current_database())
         order by total_plan_time + total_exec_time desc limit 12`,
  );
  const frequent = await queryRows<{ calls: number; plan: number; exec: number; query: string }>(
    database.db,
    sql`select calls::int, total_plan_time as plan, total_exec_time as exec,
               regexp_replace(left(query, 140), '[[:space:]]+', ' ', 'g') as query
          from pg_stat_statements
         where dbid = (select oid from pg_database where datname = current_database())
         order by calls desc limit 8`,
  );
  top.push(...frequent.filter((f) => !top.some((t) => t.query === f.query)));
  say("calls      plan ms   exec ms  statement");
  for (const s of top) {
    say(
      `${String(s.calls).padStart(6)} ${s.plan.toFixed(0).padStart(9)} ${s.exec.toFixed(0).padStart(9)}  ${s.query}`,
    );
  }
}

/**
 * Samples what the database's active backends wait on while a workload runs (BENCH_PROFILE):
 * "CPU" is an active backend waiting on nothing, so on this machine the split tells lock
 * queues, WAL flushes and CPU apart. Also the Node process's own CPU over the same span.
 */
export function startWaitSampler(database: Database, everyMs = 25): () => Promise<string[]> {
  const counts = new Map<string, number>();
  let samples = 0;
  let stopped = false;
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  const lag = monitorEventLoopDelay({ resolution: 5 });
  lag.enable();
  const loop = (async () => {
    while (!stopped) {
      polls.queries++;
      const rows = await queryRows<{ w: string; n: number }>(
        database.db,
        sql`select coalesce(wait_event_type || ':' || wait_event, 'CPU') as w, count(*)::int as n
              from pg_stat_activity
             where datname = current_database() and state = 'active' and pid <> pg_backend_pid()
             group by 1`,
      );
      samples++;
      for (const r of rows) counts.set(r.w, (counts.get(r.w) ?? 0) + r.n);
      await sleep(everyMs);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    const cpu = process.cpuUsage(cpuBefore);
    const wall = performance.now() - wallBefore;
    lag.disable();
    const lines = [
      `node cpu ${(((cpu.user + cpu.system) / 1000 / wall) * 100).toFixed(0)}% of one core over ${(wall / 1000).toFixed(1)} s; event loop delay p50 ${(lag.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(lag.percentile(99) / 1e6).toFixed(1)} ms`,
      `${samples} samples of active backends (mean per sample):`,
    ];
    for (const [w, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 10))
      lines.push(`  ${(n / Math.max(1, samples)).toFixed(2).padStart(6)}  ${w}`);
    return lines;
  };
}

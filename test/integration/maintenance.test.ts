/**
 * The maintenance jobs: one table both runtimes schedule from, and the pruning of the
 * tables that only grow otherwise, each keeping what is still in use.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { LocalBackend } from "@/backends/local";
import { jobsFor, MAINTENANCE_JOBS, PRUNE } from "@/runtime/maintenance";
import { pruneEnrichmentCache } from "@/store/enrichment-cache/prune";
import { pruneExecutionSteps } from "@/store/execution-steps/prune";
import { prunePendingCarriers } from "@/store/pending-carriers/entries";
import { pruneRateLimitLogs } from "@/store/rate-limits/prune";
import { takeFromLog } from "@/store/rate-limits/take";
import { pruneRunKeys } from "@/store/run-keys/prune";
import { apiClient } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { redriveEngine } from "../helpers/engine";
import { newWorkspace, upperDefinition } from "../helpers/fixtures";
import { workflowTable } from "../helpers/tables";

const db = () => getDatabase().db;
let url = "";

beforeAll(async () => {
  ({ url } = await useTestDatabase());
});

const nowMs = Date.now;
const HOUR = 3_600_000;

async function keys(table: "rate_limit_logs" | "pending_carriers"): Promise<string[]> {
  const column = table === "rate_limit_logs" ? sql`key` : sql`row_id`;
  const rows = await queryRows<{ k: string }>(
    db(),
    sql`select ${column} as k from ${sql.identifier(table)} order by 1`,
  );
  return rows.map((r) => r.k);
}

describe("the maintenance table", () => {
  it("gives each runtime its jobs from one list, every job on a valid five-field cron", () => {
    const ids = MAINTENANCE_JOBS.map((j) => j.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(jobsFor("local").map((j) => j.id)).toEqual([
      "prune-events",
      "rewrite-covered",
      "row-indexes-sweep",
    ]);
    expect(jobsFor("trigger").map((j) => j.id)).toEqual(ids);
    for (const job of MAINTENANCE_JOBS) expect(job.cron.split(" ")).toHaveLength(5);
  });
});

describe("pruning", () => {
  it("drops the rate-limit logs of keys idle for a day and keeps one granted just now", async () => {
    const idle = nowMs() - 25 * HOUR;
    await db().execute(
      sql`insert into rate_limit_logs (key, grants) values
            ('50/1000:ws_idle:p', array[${idle}::bigint]), ('50/1000:ws_empty:p', '{}')`,
    );
    const take = { limit: 50, windowMs: 1000, spacingMs: 0, guardMs: 0, reachMs: 0 };
    expect((await takeFromLog(db(), { key: "50/1000:ws_busy:p", ...take })).granted).toBe(true);
    expect(await pruneRateLimitLogs(db())).toBe(2);
    expect(await keys("rate_limit_logs")).toEqual(["50/1000:ws_busy:p"]);
    // A key pruned starts a fresh log on its next take.
    expect((await takeFromLog(db(), { key: "50/1000:ws_idle:p", ...take })).granted).toBe(true);
  });

  it("drops pending carrier entries a day old and keeps fresh ones", async () => {
    await db().execute(
      sql`insert into pending_carriers (row_id, table_id, run_key, enqueued_at) values
            ('row_old', 'tbl', 'k1', now() - interval '25 hours'),
            ('row_new', 'tbl', 'k2', now() - interval '5 minutes')`,
    );
    expect(await prunePendingCarriers(db())).toBe(1);
    expect(await keys("pending_carriers")).toEqual(["row_new"]);
  });

  it("drops enrichment answers past the TTL and dead claims; keeps fresh answers and live claims", async () => {
    const { id: ws } = await newWorkspace();
    await db().execute(
      sql`insert into enrichment_cache
            (workspace_id, enrichment_id, input_key, outcome, outputs, filled_at, claim_id, claimed_at)
          values (${ws}, 'e', 'old', 'ok', '{}', now() - interval '25 hours', null, null),
                 (${ws}, 'e', 'fresh', 'not_found', '{}', now() - interval '23 hours', null, null),
                 (${ws}, 'e', 'dead', null, null, null, 'c1', now() - interval '25 hours'),
                 (${ws}, 'e', 'live', null, null, null, 'c2', now() - interval '1 minute')`,
    );
    expect(await pruneEnrichmentCache(db(), 24)).toBe(2);
    const left = await queryRows<{ k: string }>(
      db(),
      sql`select input_key as k from enrichment_cache where workspace_id = ${ws} order by 1`,
    );
    expect(left.map((r) => r.k)).toEqual(["fresh", "live"]);
    // With the cache off (TTL 0) no answer is kept.
    expect(await pruneEnrichmentCache(db(), 0)).toBe(1);
  });

  it("drops run Idempotency-Keys past their 24 h and keeps younger ones", async () => {
    const { key } = await newWorkspace();
    const { tableId } = await workflowTable(key, {
      workflow: upperDefinition,
      outputs: { up: "out" },
      columns: [{ id: "v", name: "V", type: "text" }],
      group: { inputs: { v: "v" }, autoRun: false },
    });
    for (const k of ["k-old", "k-young"]) {
      const run = await apiClient(key).POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId }, header: { "idempotency-key": k } },
        body: { mode: "all" },
      });
      expect(run.response.status).toBe(202);
    }
    await db().execute(
      sql`update run_keys set created_at = now() - (case key when 'k-old' then interval '25 hours'
                                                           else interval '23 hours' end)
           where table_id = ${tableId}`,
    );
    expect(await pruneRunKeys(db())).toBe(1);
    const left = await queryRows<{ key: string }>(
      db(),
      sql`select key from run_keys where table_id = ${tableId}`,
    );
    expect(left.map((r) => r.key)).toEqual(["k-young"]);
  });

  it("drops the step records nothing reads: keeps the current execution's, those it resumes, its kept attempts' and young ones", async () => {
    const { key } = await newWorkspace();
    const { tableId, rowIds } = await workflowTable(key, {
      workflow: { inputs: [], blocks: [{ id: "t", type: "transform", expression: "1" }] },
      outputs: { out: "t" },
    });
    const rowId = rowIds[0] ?? "";
    await db().execute(
      sql`insert into cells (table_id, row_id, group_id, row_position, status, execution_id)
          select ${tableId}, id, 'g', position, 'error', 'ex_cur' from rows where id = ${rowId}`,
    );
    await db().execute(
      sql`insert into executions (id, table_id, row_id, group_id, resumes)
          values ('ex_cur', ${tableId}, ${rowId}, 'g', array['ex_prev', 'ex_first'])`,
    );
    await db().execute(
      sql`insert into cell_attempts (table_id, row_id, group_id, execution_id, attempt, status)
          values (${tableId}, ${rowId}, 'g', 'ex_hist', 1, 'error')`,
    );
    const steps = [
      ["ex_cur", "2 hours"],
      ["ex_prev", "2 hours"],
      ["ex_first", "2 hours"],
      ["ex_hist", "2 hours"],
      ["ex_gone", "2 hours"],
      ["ex_young", "10 minutes"],
    ].map(
      ([ex, age]) => sql`(${ex}, 'each:0', 'get', ${rowId}, 'g', 1, 'd', now() - ${age}::interval)`,
    );
    await db().execute(
      sql`insert into execution_steps (execution_id, scope, key, row_id, group_id, attempt, digest, created_at)
          values ${sql.join(steps, sql`, `)}`,
    );
    const pruned = await pruneExecutionSteps(db());
    const left = await queryRows<{ e: string }>(
      db(),
      sql`select execution_id as e from execution_steps where row_id = ${rowId} order by 1`,
    );
    expect(left.map((r) => r.e)).toEqual(["ex_cur", "ex_first", "ex_hist", "ex_prev", "ex_young"]);
    expect(pruned).toBe(1);
    // A row deleted takes its records with it.
    await db().execute(sql`delete from rows where id = ${rowId}`);
    expect(
      await queryRows(db(), sql`select 1 from execution_steps where row_id = ${rowId}`),
    ).toEqual([]);
  });

  it("the prune job runs every pruning and reports each count", async () => {
    await db().execute(
      sql`insert into pending_carriers (row_id, table_id, run_key, enqueued_at)
          values ('row_older', 'tbl', 'k3', now() - interval '48 hours')`,
    );
    const backend = new LocalBackend(url);
    try {
      const counts = await PRUNE.run({
        engine: redriveEngine({ database: getDatabase(), backend }),
        env: {
          EVENTS_RETENTION_HOURS: 72,
          CELLFLOW_ENRICHMENT_CACHE_TTL_HOURS: 24,
          CELLFLOW_CANCEL_RATE_PER_SECOND: undefined,
          CELLFLOW_CANCEL_CONCURRENCY: undefined,
          CELLFLOW_DESTINATION_RETRY_BASE_MS: 10_000,
        },
        signal: new AbortController().signal,
      });
      expect(Object.keys(counts).sort()).toEqual([
        "childRuns",
        "deliveries",
        "destinationDeliveries",
        "enrichmentCache",
        "events",
        "executionSteps",
        "pendingCarriers",
        "rateLimitLogs",
        "runKeys",
        "stops",
        "testRunReservations",
      ]);
      expect(counts.pendingCarriers).toBe(1);
    } finally {
      await backend.close();
    }
  });
});

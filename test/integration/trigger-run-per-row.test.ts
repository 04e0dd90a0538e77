/**
 * The one-run-per-row shape trigger.dev runs (`chain: false`: each carrier run drives one
 * row and hands the rows it frees to new runs) under load: a 2,000-row run of two chained
 * groups through the real `TriggerBackend` against the loopback fake of the API, each
 * accepted run executed concurrently in this process (test/helpers/trigger-platform.ts says what
 * is real and what is simulated), on real Postgres. Every cell ends exactly once, the
 * run's window is never exceeded, a Stop mid-run holds, and the runs a row costs are
 * counted (printed: the dashboard noise issue 16 item 5 is about, and the enqueues the
 * backend folded into a queued run of their row).
 */

import { createDatabase, type Database, queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBackend } from "@/backends/instance";
import { CARRIERS_PER_TABLE, TriggerBackend } from "@/backends/trigger";
import { log } from "@/config/log";
import { sleep } from "@/domain/sleep";
import { startRun } from "@/engine/dispatcher";
import { stopRuns } from "@/engine/stop";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { engineDeps } from "../helpers/engine";
import { type FakeTrigger, startFakeTrigger } from "../helpers/fake-trigger";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { SimulatedTriggerPlatform } from "../helpers/trigger-platform";

const ROWS = 2_000;
const WINDOW = 20;
const db = () => getDatabase().db;

let fake: FakeTrigger;
let carriers: Database;
let platform: SimulatedTriggerPlatform;
let backend: TriggerBackend;
let key: string;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  fake = await startFakeTrigger();
  carriers = createDatabase({ url, poolMax: WINDOW + 5, applicationName: "cellflow-test-trigger" });
  // As deployed (src/backends/instance.ts): with the database, duplicate carriers fold.
  backend = new TriggerBackend({
    accessToken: "tr_dev_test",
    baseURL: fake.url,
    log: log(),
    db: carriers.db,
  });
  platform = new SimulatedTriggerPlatform(
    fake,
    engineDeps({ database: carriers, backend, runtime: "trigger" }),
    WINDOW,
  );
  key = (await newWorkspace()).key;
}, 60_000);

afterAll(async () => {
  await platform?.stop();
  await carriers?.close();
  await fake?.close();
});

/** A table of `rows` rows whose group b depends on group a's output (both transforms). */
async function chainTable(rows: number): Promise<string> {
  const wf = async (expression: string) =>
    dataOf(
      await apiClient(key).POST("/api/workflows", {
        body: { name: "t", definition: { blocks: [{ id: "v", type: "transform", expression }] } },
      }),
    ).id;
  const [wa, wb] = [await wf("1"), await wf("2")];
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "per-row",
      columns: [
        { id: "a", name: "A", type: "json" },
        { id: "b", name: "B", type: "json" },
      ],
      groups: [
        {
          id: "ga",
          name: "GA",
          kind: "workflow",
          workflowId: wa,
          outputs: [{ columnId: "a", from: "v" }],
        },
        {
          id: "gb",
          name: "GB",
          kind: "workflow",
          workflowId: wb,
          outputs: [{ columnId: "b", from: "v" }],
          dependsOn: ["a"],
        },
      ],
    },
  });
  for (let i = 0; i < rows; i += 1000) {
    await apiClient(key).POST("/api/tables/{id}/rows", {
      params: { path: { id: dataOf(t).id } },
      body: { rows: Array.from({ length: Math.min(1000, rows - i) }, () => ({ data: {} })) },
    });
  }
  return dataOf(t).id;
}

async function counts(tableId: string): Promise<Record<string, number>> {
  const rows = await queryRows<{ status: string; n: number }>(
    db(),
    sql`select status::text as status, count(*)::int as n from cells where table_id = ${tableId} group by 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** Terminal cell events per (row, group, execution) seen more than once. */
async function repeatedTerminals(tableId: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db(),
    sql`select count(*)::int as n from (
          select 1 from events where table_id = ${tableId} and kind = 'cell'
             and data->>'status' in ('completed', 'error', 'cancelled')
           group by data->>'rowId', data->>'groupId', data->>'executionId' having count(*) > 1) x`,
  );
  return row?.n ?? -1;
}

/** Samples the rows of a dispatch with a running cell until `until` resolves; the most seen. */
async function mostRowsRunning(dispatchId: string, until: Promise<unknown>): Promise<number> {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  let most = 0;
  while (!done) {
    const [row] = await queryRows<{ n: number }>(
      db(),
      sql`select count(distinct row_id)::int as n from cells
           where dispatch_id = ${dispatchId} and status = 'running'`,
    );
    most = Math.max(most, row?.n ?? 0);
    await sleep(25);
  }
  return most;
}

async function dispatchStatus(dispatchId: string): Promise<string | undefined> {
  const [d] = await queryRows<{ status: string }>(
    db(),
    sql`select status::text as status from dispatches where id = ${dispatchId}`,
  );
  return d?.status;
}

describe("one trigger.dev run per row, under load", () => {
  it("a 2,000-row run ends every cell exactly once, within its window; a Stop mid-run holds", async () => {
    const tableId = await chainTable(ROWS);
    platform.startSchedule(2_000);
    const before = { ...platform.stats };
    const foldedBefore = backend.folded;
    const run = await startRun(
      { db: db(), backend },
      {
        tableId,
        groupIds: ["ga", "gb"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: WINDOW,
      },
    );
    const finished = waitFor(
      async () => (await dispatchStatus(run.dispatchId)) === "completed",
      240_000,
    );
    const most = await mostRowsRunning(run.dispatchId, finished);
    expect(await finished).toBe(true);
    expect(await counts(tableId)).toEqual({ completed: ROWS * 2 });
    expect(await repeatedTerminals(tableId)).toBe(0);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(WINDOW);
    const runs = platform.stats.triggered - before.triggered;
    const repeats = platform.stats.deduplicated - before.deduplicated;
    const folded = backend.folded - foldedBefore;
    expect(platform.stats.failed - before.failed).toBe(0);
    process.stdout.write(
      `[trigger-run-per-row] ${ROWS} rows: ${runs} runs started (${(runs / ROWS).toFixed(2)} per row), ${repeats} triggers deduplicated by idempotency key, ${folded} enqueues folded into a queued run of their row\n`,
    );

    // A second run of the same rows, stopped once it is well under way.
    const again = await startRun(
      { db: db(), backend },
      {
        tableId,
        groupIds: ["ga", "gb"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: WINDOW,
      },
    );
    expect(await waitFor(async () => ((await counts(tableId)).completed ?? 0) >= 200, 60_000)).toBe(
      true,
    );
    const stopped = await stopRuns(
      { db: db(), backend },
      { tableId, dispatchId: again.dispatchId },
    );
    expect(stopped.cancelled).toBeGreaterThan(0);
    // The Stop's own transaction cancelled every queued and running cell of the run.
    const atStop = await counts(tableId);
    expect(atStop.queued ?? 0).toBe(0);
    expect(atStop.running ?? 0).toBe(0);
    // Runs already under way finish their current step and find the tombstones.
    // Let the re-drive schedule pass over the table twice: it must find nothing to carry.
    const passes = platform.stats.redrivePasses;
    expect(await waitFor(() => platform.stats.redrivePasses >= passes + 2, 30_000)).toBe(true);
    const after = await counts(tableId);
    expect(after.queued ?? 0).toBe(0);
    expect(after.running ?? 0).toBe(0);
    // No run brought a cancelled cell back or completed one after the Stop.
    expect(after).toEqual(atStop);
    expect(await dispatchStatus(again.dispatchId)).not.toBe("active");
    expect(await repeatedTerminals(tableId)).toBe(0);
  }, 300_000);

  it("a run's window is held to the carriers trigger.dev runs per table, so no handed-out row waits for a slot", async () => {
    const tableId = await chainTable(3);
    const windowOf = async (b: typeof backend | ReturnType<typeof getBackend>) => {
      const run = await startRun(
        { db: db(), backend: b },
        {
          tableId,
          groupIds: ["ga"],
          mode: "all",
          rowIds: null,
          limit: null,
          window: 200,
        },
      );
      await stopRuns({ db: db(), backend: b }, { tableId, dispatchId: run.dispatchId });
      const [d] = await queryRows<{ window: number }>(
        db(),
        sql`select "window" from dispatches where id = ${run.dispatchId}`,
      );
      return d?.window;
    };
    expect(await windowOf(backend)).toBe(CARRIERS_PER_TABLE);
    // The local backend has no per-table cap: the window asked for stands.
    expect(await windowOf(getBackend())).toBe(200);
  });
});

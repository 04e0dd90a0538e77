/**
 * The trigger.dev task definitions run as the platform would run them (trigger.dev's
 * mock task context: locals, metadata, ctx), on a real row in real Postgres. The only
 * fake is the trigger.dev API behind the backend the tasks trigger follow-up runs with.
 * A paid call inside a task refuses the per-process limiter: each run is its own process.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { runInMockTaskContext } from "@trigger.dev/core/v3/test";
import { metadata } from "@trigger.dev/sdk";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TASKS } from "@/backends/port";
import { TriggerBackend } from "@/backends/trigger";
import { readEnv } from "@/config/env";
import { log } from "@/config/log";
import { drainRunCancels, drainSettings } from "@/engine/run-cancel-drain";
import { stopRuns } from "@/engine/stop";
import { sharedLimiterRefusal } from "@/limits/rate/port";
import { assembleEngine, type EngineRuntime } from "@/runtime/engine";
import { jobsFor } from "@/runtime/maintenance";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { type Endpoint, startEndpoint } from "../helpers/endpoint";
import { cellCounts } from "../helpers/engine";
import { type FakeTrigger, startFakeTrigger } from "../helpers/fake-trigger";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { websiteMetaTableBody } from "../helpers/store-tables";
import { waitTable } from "../helpers/tables";
import { catalogTask, installTaskCatalog } from "../helpers/trigger-catalog";

let key: string;
let fake: FakeTrigger;
let ep: Endpoint;
let backend: TriggerBackend;
let engine: EngineRuntime;
let taskEngineKey: typeof import("@/trigger/deps").taskEngineKey;

beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
  fake = await startFakeTrigger();
  ep = await startEndpoint();
  ep.on("/site", async () => ({
    status: 200,
    body: "<title>t</title>",
    headers: { "content-type": "text/html" },
  }));
  installTaskCatalog();
  ({ taskEngineKey } = await import("@/trigger/deps"));
  await import("@/trigger/row-carrier");
  await import("@/trigger/stamp-dispatch");
  await import("@/trigger/maintenance");
  backend = new TriggerBackend({
    accessToken: "tr_dev_t",
    baseURL: fake.url,
    log: log(),
    backoffMs: () => 1,
  });
  engine = engineWith(readEnv());
});
afterAll(async () => {
  await engine.close();
  await fake.close();
  await ep.close();
});

/** The engine a task run assembles, over the test database and the fake platform. */
function engineWith(env: ReturnType<typeof readEnv>): EngineRuntime {
  return assembleEngine({ runtime: "trigger", env, database: getDatabase(), backend, log: log() });
}

/** Runs the carrier task the way a trigger.dev run would, with `seeded` as its engine. */
async function runCarrierTask(
  payload: unknown,
  runId: string,
  signal: AbortSignal,
  seeded: EngineRuntime = engine,
): Promise<{ output: unknown; meta: Record<string, unknown> }> {
  return runInMockTaskContext(
    async ({ ctx, locals }) => {
      locals.set(taskEngineKey, seeded);
      const task = catalogTask(TASKS.carrier);
      const parsed = task.fns.parsePayload ? await task.fns.parsePayload(payload) : payload;
      const output: unknown = await task.fns.run(parsed, { ctx, signal });
      return { output, meta: (metadata.current() ?? {}) as Record<string, unknown> };
    },
    { ctx: { run: { id: runId } } },
  );
}

describe("trigger.dev tasks", () => {
  it("registers the carrier, the stamper and every maintenance job of the one table, on its schedule", () => {
    for (const id of [TASKS.carrier, TASKS.stamper]) expect(catalogTask(id).id).toBe(id);
    const jobs = jobsFor("trigger");
    expect(jobs.map((j) => j.id).sort()).toEqual([
      "drain-destinations",
      "drain-run-cancels",
      "fire-schedules",
      "fold-counts",
      "prune-events",
      "redrive-orphans",
      "rewrite-covered",
      "row-indexes-sweep",
    ]);
    for (const job of jobs) expect(catalogTask(job.id).schedule?.cron).toBe(job.cron);
  });

  it("the carrier task drives a real row, records its run on the cell and shows progress in metadata", async () => {
    const t = await waitTable(key, { groups: 2, ms: 5, rows: 1 });
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all" },
    });
    const rowId = t.rowIds[0] as string;
    const { output, meta } = await runCarrierTask(
      { tableId: t.id, rowId },
      "run_carrier_1",
      new AbortController().signal,
    );
    expect(output).toEqual({ outcome: "done" });
    expect(await cellCounts(t.id)).toEqual({ completed: 2 });
    const runs = await queryRows<{ run_id: string }>(
      getDatabase().db,
      sql`select run_id from cells where table_id = ${t.id}`,
    );
    expect(runs.map((r) => r.run_id)).toEqual(["run_carrier_1", "run_carrier_1"]);
    expect(meta).toMatchObject({
      tableId: t.id,
      rowId,
      cell: { groupId: "g1", state: "completed" },
      attemptsEnded: 2,
    });
  });

  it("the fire-schedules task starts a due schedule's run and triggers its carriers after the commit, once", async () => {
    const t = await waitTable(key, { groups: 1, ms: 5, rows: 2 });
    const created = await apiClient(key).POST("/api/tables/{id}/schedules", {
      params: { path: { id: t.id } },
      body: { cron: "* * * * *", mode: "all" },
    });
    const scheduleId = dataOf(created).id;
    await getDatabase().db.execute(
      sql`update schedules set next_run_at = now() - interval '1 second' where id = ${scheduleId}`,
    );
    const carriers: unknown[] = [];
    fake.onRun((run) => {
      if (run.task === TASKS.carrier) carriers.push(run.payload);
    });
    const fire = () =>
      runInMockTaskContext(
        async ({ ctx, locals }) => {
          locals.set(taskEngineKey, engine);
          const task = catalogTask("fire-schedules");
          return task.fns.run({}, { ctx, signal: new AbortController().signal });
        },
        { ctx: { run: { id: "run_fire_schedules" } } },
      );
    // Two overlapping runs of the minute task: one run of the schedule.
    await Promise.all([fire(), fire()]);
    const [row] = await queryRows<{ dispatches: number; last: string | null }>(
      getDatabase().db,
      sql`select (select count(*)::int from dispatches where table_id = ${t.id}) as dispatches,
                 (select last_dispatch_id from schedules where id = ${scheduleId}) as last`,
    );
    expect(row?.dispatches).toBe(1);
    expect(row?.last).not.toBeNull();
    expect(await waitFor(async () => carriers.length >= 2, 5_000), JSON.stringify(carriers)).toBe(
      true,
    );
    expect(carriers).toEqual(
      expect.arrayContaining(
        t.rowIds.map((rowId) => expect.objectContaining({ tableId: t.id, rowId })),
      ),
    );
  });

  it("a payload that is not a carrier payload is refused before anything runs", async () => {
    await expect(
      runCarrierTask({ tableId: "" }, "run_bad", new AbortController().signal),
    ).rejects.toThrow();
  });

  it("a Stop cancels the run: its signal ends the attempt at once and the cell stays cancelled", async () => {
    const t = await waitTable(key, { groups: 1, ms: 120_000, rows: 1 });
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all" },
    });
    const rowId = t.rowIds[0] as string;
    const cancel = new AbortController();
    const started = Date.now();
    const running = runCarrierTask({ tableId: t.id, rowId }, "run_carrier_2", cancel.signal);
    expect(await waitFor(async () => (await cellCounts(t.id)).running === 1, 10_000)).toBe(true);
    fake.requests.length = 0;
    // The Stop, with the trigger.dev backend: it answers without calling the platform,
    // leaving the run recorded on the cell to the cancel outbox…
    await stopRuns({ db: getDatabase().db, backend }, { tableId: t.id });
    expect(fake.requests).toEqual([]);
    // …whose drain cancels it…
    await drainRunCancels({
      db: getDatabase().db,
      backend: backend,
      log: log(),
      settings: drainSettings(),
    });
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /api/v2/runs/run_carrier_2/cancel",
    ]);
    // …and trigger.dev aborts the run's signal.
    cancel.abort(new Error("run cancelled"));
    await running;
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(await cellCounts(t.id)).toEqual({ cancelled: 1 });
  });

  it("an aborted run (maxDuration, redeploy) hands its cell back and triggers a new carrier", async () => {
    const t = await waitTable(key, { groups: 1, ms: 120_000, rows: 1 });
    await apiClient(key).POST("/api/tables/{id}/runs", {
      params: { path: { id: t.id } },
      body: { mode: "all" },
    });
    const rowId = t.rowIds[0] as string;
    const abort = new AbortController();
    const running = runCarrierTask({ tableId: t.id, rowId }, "run_carrier_3", abort.signal);
    expect(await waitFor(async () => (await cellCounts(t.id)).running === 1, 10_000)).toBe(true);
    fake.requests.length = 0;
    abort.abort(new Error("maxDuration exceeded"));
    await running;
    expect(await cellCounts(t.id)).toEqual({ queued: 1 });
    const triggers = fake.requests.filter(
      (r) => r.path === `/api/v1/tasks/${TASKS.carrier}/trigger`,
    );
    expect(triggers).toHaveLength(1);
    const body = JSON.parse(triggers[0]?.body ?? "{}") as { payload: string };
    expect((JSON.parse(body.payload) as { json: unknown }).json).toEqual({ tableId: t.id, rowId });
  });
});

/** A one-row table whose group is the paid, rate-limited website_meta enrichment. */
async function paidTable(): Promise<{ id: string; rowId: string }> {
  const t = await apiClient(key).POST("/api/tables", {
    body: websiteMetaTableBody("paid"),
  });
  const rows = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: dataOf(t).id } },
    body: { rows: [{ data: { url: `${ep.url}/site` } }] },
  });
  await apiClient(key).POST("/api/tables/{id}/runs", {
    params: { path: { id: dataOf(t).id } },
    body: { mode: "all" },
  });
  return { id: dataOf(t).id, rowId: dataOf(rows).rows[0]?.id ?? "" };
}

/** Runs `fn` with an engine whose limiter the environment chooses from RATE_LIMITER=`kind`. */
async function withLimiter<T>(
  kind: string | undefined,
  fn: (seeded: EngineRuntime) => Promise<T>,
): Promise<T> {
  const seeded = engineWith(readEnv({ ...process.env, RATE_LIMITER: kind }));
  try {
    return await fn(seeded);
  } finally {
    await seeded.close();
  }
}

describe("paid calls in trigger.dev tasks need a limiter shared by every run", () => {
  it("with RATE_LIMITER=memory the cell ends error with the reason and the provider is never called", async () => {
    const t = await paidTable();
    ep.hits.length = 0;
    const { output } = await withLimiter("memory", (seeded) =>
      runCarrierTask(
        { tableId: t.id, rowId: t.rowId },
        "run_paid_memory",
        new AbortController().signal,
        seeded,
      ),
    );
    expect(output).toEqual({ outcome: "done" });
    const cells = await queryRows<{ status: string; error: string | null }>(
      getDatabase().db,
      sql`select status, error from cells where table_id = ${t.id}`,
    );
    expect(cells).toEqual([
      {
        status: "error",
        error:
          "RATE_LIMITER=memory cannot limit calls across trigger.dev runs: use postgres (default), redis or upstash",
      },
    ]);
    expect(ep.hitsOf("/site")).toEqual([]);
  });

  it("with the default Postgres limiter the same cell calls its provider and completes", async () => {
    const t = await paidTable();
    ep.hits.length = 0;
    await withLimiter(undefined, (seeded) =>
      runCarrierTask(
        { tableId: t.id, rowId: t.rowId },
        "run_paid_pg",
        new AbortController().signal,
        seeded,
      ),
    );
    expect(await cellCounts(t.id)).toEqual({ completed: 1 });
    expect(ep.hitsOf("/site")).toHaveLength(1);
  });

  it("Postgres, Redis and Upstash are shared by every run and accepted; only memory is refused", () => {
    const kinds = ["postgres", "redis", "upstash", "memory"] as const;
    expect(kinds.map((k) => sharedLimiterRefusal(k) !== undefined)).toEqual([
      false,
      false,
      false,
      true,
    ]);
  });
});

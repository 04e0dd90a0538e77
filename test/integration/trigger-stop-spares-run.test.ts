/**
 * A Stop on trigger.dev cancels a row's run only when nothing else rides on it. Each row
 * carrier is one run; cancelling it ends the whole process, so a Stop of one cell must
 * not cancel a run that also carries another cell of the row (queued behind the stopped
 * one) or an auto-run it would still stamp: the stopped block ends on its tombstone (the
 * attempt's stop check) and the run carries the rest at once, with no re-drive. A Stop of
 * everything the run carries still cancels it. Real `TriggerBackend` against the fake
 * trigger.dev API, runs executed by the simulated platform (a cancel ends the run as the
 * platform does: its signal aborts and it asks nothing more of the API), the outbox
 * drained by the server's drain loop, real Postgres. No re-drive runs here: a cell left
 * for it would stay queued. The Stop is taken in this process, where the simulated runs
 * also execute; on trigger.dev it is taken in the API process, whose in-process abort
 * cannot reach a run's attempts, so that abort is left out here (`abortLocal`).
 */

import { createDatabase, type Database, queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { TriggerBackend } from "@/backends/trigger";
import { log } from "@/config/log";

const STOP_CHECK_MS = 2_000;

import { startRun } from "@/engine/dispatcher";
import { drainSettings } from "@/engine/run-cancel-drain";
import { type RunCancelLoop, startRunCancelLoop } from "@/engine/run-cancel-loop";
import { stopRuns } from "@/engine/stop";
import { countRunCancels } from "@/store/run-cancels/outbox";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { engineDeps } from "../helpers/engine";
import { type FakeTrigger, startFakeTrigger } from "../helpers/fake-trigger";
import { newWorkspace } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";
import { waitWorkflow } from "../helpers/tables";
import { SimulatedTriggerPlatform } from "../helpers/trigger-platform";

vi.mock("@/engine/cancellation", async (importOriginal) => ({
  ...(await importOriginal<typeof import("@/engine/cancellation")>()),
  abortLocal: () => 0,
}));

/** The stopped block waits this long (in process: under LONG_WAIT_MS), far past every wait below. */
const LONG_MS = 240_000;
const db = () => getDatabase().db;

let fake: FakeTrigger;
let carriers: Database;
let platform: SimulatedTriggerPlatform;
let backend: TriggerBackend;
let loop: RunCancelLoop;
let key: string;

beforeAll(async () => {
  const { url } = await useTestDatabase();
  fake = await startFakeTrigger();
  carriers = createDatabase({ url, poolMax: 10, applicationName: "cellflow-test-trigger-stop" });
  backend = new TriggerBackend({
    accessToken: "tr_dev_test",
    baseURL: fake.url,
    log: log(),
    db: carriers.db,
  });
  platform = new SimulatedTriggerPlatform(
    fake,
    engineDeps({ database: carriers, backend, runtime: "trigger" }),
    5,
  );
  // The API process's drainer, woken by each Stop.
  loop = startRunCancelLoop({
    db: db(),
    backend,
    log: log(),
    settings: drainSettings({ backoffMs: () => 20 }),
    pollMs: 50,
  });
  key = (await newWorkspace()).key;
}, 60_000);

afterAll(async () => {
  await loop?.stop();
  await platform?.stop();
  await carriers?.close();
  await fake?.close();
});

beforeEach(() => {
  fake.cancelCalls.clear();
  fake.cancelled.clear();
});

const transform = async (expression: string) =>
  dataOf(
    await apiClient(key).POST("/api/workflows", {
      body: { name: "t", definition: { blocks: [{ id: "v", type: "transform", expression }] } },
    }),
  ).id;

/**
 * One row; `slow` waits LONG_MS (in process, abortable, writing nothing meanwhile), `fast`
 * is a transform filling `f`; with `cascade`, group `auto` auto-runs on `f` (declared
 * first: `fast`, then `slow`, then `auto`).
 */
async function table(cascade: boolean): Promise<{ tableId: string; rowId: string }> {
  const [slow, fast] = [await waitWorkflow(key, LONG_MS), await transform("'f'")];
  const groups = [
    {
      id: "fast",
      name: "Fast",
      kind: "workflow" as const,
      workflowId: fast,
      outputs: [{ columnId: "f", from: "v" }],
    },
    {
      id: "slow",
      name: "Slow",
      kind: "workflow" as const,
      workflowId: slow,
      outputs: [{ columnId: "s", from: "done" }],
    },
    ...(cascade
      ? [
          {
            id: "auto",
            name: "Auto",
            kind: "workflow" as const,
            workflowId: await transform("'a'"),
            outputs: [{ columnId: "a", from: "v" }],
            dependsOn: ["f"],
            autoRun: true,
          },
        ]
      : []),
  ];
  // Without the cascade the slow group comes first, so the fast one waits queued behind it.
  if (!cascade) groups.reverse();
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "stop one cell",
      columns: [
        { id: "f", name: "F", type: "json" },
        { id: "s", name: "S", type: "text" },
        { id: "a", name: "A", type: "json" },
      ],
      groups,
    },
  });
  const tableId = dataOf(t).id;
  const ins = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: { rows: [{ data: {} }] },
  });
  const rowId = dataOf(ins).rows[0]?.id;
  if (!rowId) throw new Error("no row");
  return { tableId, rowId };
}

interface CellState {
  groupId: string;
  status: string;
  runId: string | null;
  runningBlockIds: string[];
}

async function cells(rowId: string): Promise<Record<string, CellState>> {
  const rows = await queryRows<CellState>(
    db(),
    sql`select group_id as "groupId", status::text as status, run_id as "runId",
               running_block_ids as "runningBlockIds"
          from cells where row_id = ${rowId}`,
  );
  return Object.fromEntries(rows.map((c) => [c.groupId, c]));
}

/**
 * Runs `groups` on the row and waits until the slow cell's wait is under way (its progress
 * written: from then on the attempt writes nothing until the wait ends, so no refused
 * write of its own can end it early); the run carrying it.
 */
async function slowRunning(tableId: string, rowId: string, groups: string[]): Promise<string> {
  await startRun(
    { db: db(), backend },
    {
      tableId,
      groupIds: groups,
      mode: "all",
      rowIds: [rowId],
      limit: null,
      window: 5,
    },
  );
  let runId: string | null = null;
  const running = await waitFor(async () => {
    const slow = (await cells(rowId)).slow;
    runId =
      slow?.status === "running" && slow.runningBlockIds.includes("pause") ? slow.runId : null;
    return runId !== null;
  }, 20_000);
  expect(running).toBe(true);
  if (!runId) throw new Error("the slow cell never ran");
  return runId;
}

/** Waits for a drain that started after the Stop, and for the outbox to be empty. */
async function drained(): Promise<void> {
  await loop.drained();
  expect(await waitFor(async () => (await countRunCancels(db())) === 0, 10_000)).toBe(true);
}

describe("a Stop on trigger.dev cancels a row's run only when nothing else rides on it", () => {
  it("a Stop of one cell spares the run that also carries the row's queued cell: the stopped block ends on its tombstone and the run completes the other group itself", async () => {
    const { tableId, rowId } = await table(false);
    const runId = await slowRunning(tableId, rowId, ["slow", "fast"]);
    expect((await cells(rowId)).fast?.status).toBe("queued");
    const killed = platform.stats.killed;

    const t0 = Date.now();
    await stopRuns({ db: db(), backend }, { tableId, rowIds: [rowId], groupIds: ["slow"] });
    expect((await cells(rowId)).slow?.status).toBe("cancelled");
    await drained();
    // The platform was never asked to cancel the run.
    expect(fake.cancelCalls.get(runId)).toBeUndefined();

    // The same run carries the fast cell once the slow block saw its tombstone: no new run,
    // no re-drive (none runs in this file).
    expect(
      await waitFor(async () => (await cells(rowId)).fast?.status === "completed", 20_000),
    ).toBe(true);
    const ms = Date.now() - t0;
    const after = await cells(rowId);
    expect(after.fast?.runId).toBe(runId);
    expect(after.slow?.status).toBe("cancelled");
    expect(platform.stats.killed).toBe(killed);
    // The stop check's bound, with room for a loaded machine (the block would wait 4 min).
    expect(ms).toBeLessThan(STOP_CHECK_MS + 8_000);
    process.stdout.write(
      `[trigger-stop-spares-run] the stopped block ended and the row's other group completed ${ms} ms after the Stop (stop check every ${STOP_CHECK_MS} ms)\n`,
    );
  }, 60_000);

  it("a Stop of one cell spares the run that would still auto-run a group the Stop does not hold, and the run stamps and completes it", async () => {
    const { tableId, rowId } = await table(true);
    // `fast` completes first, then `slow` runs; `auto` (on `fast`'s output) comes after it.
    const runId = await slowRunning(tableId, rowId, ["fast", "slow"]);
    const before = await cells(rowId);
    expect(before.fast?.status).toBe("completed");
    expect(before.auto).toBeUndefined();

    await stopRuns({ db: db(), backend }, { tableId, rowIds: [rowId], groupIds: ["slow"] });
    await drained();
    expect(fake.cancelCalls.get(runId)).toBeUndefined();

    expect(
      await waitFor(async () => (await cells(rowId)).auto?.status === "completed", 20_000),
    ).toBe(true);
    const after = await cells(rowId);
    expect(after.auto?.runId).toBe(runId);
    expect(after.slow?.status).toBe("cancelled");
  }, 60_000);

  it("a Stop covering every cell the run carries cancels the run, once", async () => {
    const { tableId, rowId } = await table(false);
    const runId = await slowRunning(tableId, rowId, ["slow", "fast"]);

    await stopRuns({ db: db(), backend }, { tableId, rowIds: [rowId] });
    await drained();
    // (Whether the cancel or the stop check ends the run first is a race either may win.)
    expect(fake.cancelled.get(runId)).toBe(1);
    expect(fake.cancelCalls.get(runId)).toBe(1);
    const after = await cells(rowId);
    expect(after.slow?.status).toBe("cancelled");
    expect(after.fast?.status).toBe("cancelled");
  }, 60_000);
});

/**
 * The fold of duplicate carriers on the trigger.dev backend (issue 16 item 5), against the
 * loopback fake of the API and real Postgres: a carrier enqueued while its row's run is
 * queued and not started triggers nothing; one enqueued after that run started (it
 * clears its entry before it reads the row) is a new run, so work left on the row is
 * never swallowed; a failed trigger takes its entries back; a stale entry does not fold.
 */

import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CarrierPayloadSchema, carrierSpec } from "@/backends/port";
import { BATCH_SIZE, FOLD_STALE_MS, TriggerBackend } from "@/backends/trigger";
import { log } from "@/config/log";
import { runCarrier } from "@/engine/carrier";
import { startRun as startDispatch } from "@/engine/dispatcher";
import { redriveOrphans } from "@/engine/redrive";
import { useTestDatabase } from "../helpers/db";
import { engineDeps, redriveEngine } from "../helpers/engine";
import { type FakeTrigger, startFakeTrigger, type TriggeredRun } from "../helpers/fake-trigger";
import { newWorkspace } from "../helpers/fixtures";
import { waitTable } from "../helpers/tables";

let fake: FakeTrigger;
let backend: TriggerBackend;
let key: string;
const runs: TriggeredRun[] = [];
const db = () => getDatabase().db;

beforeAll(async () => {
  await useTestDatabase();
  fake = await startFakeTrigger();
  fake.onRun((run) => runs.push(run));
  backend = new TriggerBackend({
    accessToken: "tr_dev_fold",
    baseURL: fake.url,
    log: log(),
    backoffMs: () => 1,
    db: db(),
  });
  key = (await newWorkspace()).key;
});
afterAll(() => fake.close());
beforeEach(() => {
  runs.length = 0;
  fake.requests.length = 0;
});

let n = 0;
const freshRow = () => `row_fold_${++n}`;
const runsOf = (rowId: string) =>
  runs.filter((r) => CarrierPayloadSchema.safeParse(r.payload).data?.rowId === rowId);

async function entryOf(rowId: string): Promise<{ runKey: string } | undefined> {
  const [row] = await queryRows<{ runKey: string }>(
    db(),
    sql`select run_key as "runKey" from pending_carriers where row_id = ${rowId}`,
  );
  return row;
}

/** What a trigger.dev run of the carrier does first (the task calls runCarrier so). */
async function startRun(run: TriggeredRun | undefined): Promise<void> {
  const payload = CarrierPayloadSchema.parse(run?.payload);
  await runCarrier(engineDeps({ backend, runtime: "trigger" }), payload, {
    runId: run?.id ?? "run_x",
    signal: new AbortController().signal,
  });
}

describe("carrier enqueues on the trigger.dev backend", () => {
  it("an enqueue for a row whose run is queued and not started folds into that run", async () => {
    const rowId = freshRow();
    const folded = backend.folded;
    await backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId, dispatchId: "d_1" })]);
    await backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId, dispatchId: "d_1" })]);
    // No dispatch (the re-drive's, the carrier's own re-enqueue): the queued run covers it.
    await backend.enqueue([
      carrierSpec({ tableId: "tbl_f", rowId }),
      carrierSpec({ tableId: "tbl_f", rowId: freshRow() }),
    ]);
    expect(runsOf(rowId)).toHaveLength(1);
    expect(backend.folded - folded).toBe(2);
    const payload = CarrierPayloadSchema.parse(runsOf(rowId)[0]?.payload);
    expect(payload.pendingKey).toBe((await entryOf(rowId))?.runKey);
  });

  it("enqueues of one row racing each other start one run", async () => {
    const rowId = freshRow();
    await Promise.all(
      Array.from({ length: 5 }, () => backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId })])),
    );
    expect(runsOf(rowId)).toHaveLength(1);
  });

  it("an enqueue after the row's run started is a new run", async () => {
    const rowId = freshRow();
    await backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId })]);
    await startRun(runsOf(rowId)[0]);
    expect(await entryOf(rowId)).toBeUndefined();
    await backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId })]);
    expect(runsOf(rowId)).toHaveLength(2);
    // And that second run folds the enqueues that come while it waits.
    await backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId })]);
    expect(runsOf(rowId)).toHaveLength(2);
  });

  it("a run that starts late does not clear the entry of the row's newer run", async () => {
    const rowId = freshRow();
    await backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId })]);
    await db().execute(
      sql`update pending_carriers set enqueued_at = now() - make_interval(secs => ${FOLD_STALE_MS / 1000 + 60})
           where row_id = ${rowId}`,
    );
    await backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId })]);
    const [lost, newer] = runsOf(rowId);
    await startRun(lost);
    const key = CarrierPayloadSchema.parse(newer?.payload).pendingKey;
    expect((await entryOf(rowId))?.runKey).toBe(key);
  });

  it("a stale entry (a run the platform lost) does not fold the row's next enqueue", async () => {
    const rowId = freshRow();
    await backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId })]);
    await db().execute(
      sql`update pending_carriers set enqueued_at = now() - make_interval(secs => ${FOLD_STALE_MS / 1000 + 1})
           where row_id = ${rowId}`,
    );
    await backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId })]);
    expect(runsOf(rowId)).toHaveLength(2);
  });

  it("a failed trigger leaves no entry behind: the row's next enqueue triggers", async () => {
    const one = freshRow();
    const many = Array.from({ length: BATCH_SIZE + 3 }, () => freshRow());
    fake.failNext(100, 503);
    await expect(
      backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId: one })]),
    ).rejects.toThrow();
    await expect(
      backend.enqueue(many.map((rowId) => carrierSpec({ tableId: "tbl_f", rowId }))),
    ).rejects.toThrow();
    fake.failNext(0, 500);
    expect(await entryOf(one)).toBeUndefined();
    const [left] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from pending_carriers where row_id like 'row_fold_%'
           and row_id = any(array(select jsonb_array_elements_text(${JSON.stringify(many)}::jsonb)))`,
    );
    expect(left?.n).toBe(0);
    await backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId: one })]);
    expect(runsOf(one)).toHaveLength(1);
  });

  it("a carrier for another dispatch, or a paused wait's delayed resume, is its own run", async () => {
    const rowId = freshRow();
    await backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId, dispatchId: "d_1" })]);
    await backend.enqueue([carrierSpec({ tableId: "tbl_f", rowId, dispatchId: "d_2" })]);
    await backend.enqueue([
      {
        ...carrierSpec({ tableId: "tbl_f", rowId, resumeWait: { groupId: "g", executionId: "e" } }),
        idempotencyKey: "resume:e",
        delayMs: 1_000,
      },
    ]);
    expect(runsOf(rowId)).toHaveLength(3);
  });

  it("a row whose run waits in the queue past the re-drive's grace gets no second run, and its run does the work", async () => {
    const t = await waitTable(key, { groups: 1, ms: 0, rows: 1 });
    const rowId = t.rowIds[0] as string;
    const { dispatchId } = await startDispatch(
      { db: db(), backend },
      {
        tableId: t.id,
        groupIds: ["g0"],
        mode: "all",
        rowIds: null,
        limit: null,
        window: 1,
      },
    );
    expect(runsOf(rowId)).toHaveLength(1);
    // Stamped and handed out a minute ago, the run still queued: to the re-drive, an orphan.
    await db().execute(
      sql`update cells set queued_at = now() - interval '1 minute' where table_id = ${t.id}`,
    );
    await db().execute(
      sql`update dispatches set prev_cursor_at = prev_cursor_at - interval '1 minute' where id = ${dispatchId}`,
    );
    const report = await redriveOrphans(
      redriveEngine({ database: getDatabase(), backend, log: log() }),
    );
    expect(report.carriers).toBe(1);
    expect(runsOf(rowId)).toHaveLength(1);
    await startRun(runsOf(rowId)[0]);
    const [cell] = await queryRows<{ status: string }>(
      db(),
      sql`select status::text as status from cells where row_id = ${rowId}`,
    );
    expect(cell?.status).toBe("completed");
  });
});

/**
 * A schedule PATCH is merged from one read and written only over that read (API.md
 * "Schedules, destinations, views"; store/schedules/update.ts): two PATCHes merged from one
 * read both keep their fields; a PATCH merged before the scheduler took a due time does not
 * put that due time back (it would fire twice), and a due time seen before a PATCH changed
 * the cron is not moved on by the old cron; a PATCH that loses every merge answers 409.
 * Interleavings are forced with a row lock another transaction holds (both flows read, then
 * their writes wait on it; the test waits for that wait) or a race point, never with sleeps.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getBackend } from "@/backends/instance";
import { log } from "@/config/log";
import type { ServiceContext } from "@/services/context";
import { fireSchedule } from "@/services/schedule-fire";
import { patchSchedule } from "@/services/schedules";
import { dueSchedules } from "@/store/schedules/read";
import { apiClient, dataOf } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { everyPoint } from "../helpers/engine-harness";
import { newWorkspace, upperDefinition } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";

const db = () => getDatabase().db;
const scheduler = () => ({ db: db(), backend: getBackend() });

let key: string;
let ctx: ServiceContext;
let workflowId: string;
beforeAll(async () => {
  await useTestDatabase();
  const ws = await newWorkspace();
  key = ws.key;
  ctx = { db: db(), backend: getBackend(), log: log(), workspaceId: ws.id };
  const wf = await apiClient(key).POST("/api/workflows", {
    body: { name: "upper", definition: upperDefinition },
  });
  workflowId = dataOf(wf).id;
});

async function newScheduled(cron: string): Promise<{ tableId: string; scheduleId: string }> {
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "Scheduled",
      columns: [{ id: "v", name: "V", type: "text" }],
      groups: [{ id: "g", name: "G", kind: "workflow", workflowId, inputs: { v: "v" } }],
    },
  });
  const tableId = dataOf(t).id;
  const s = await apiClient(key).POST("/api/tables/{id}/schedules", {
    params: { path: { id: tableId } },
    body: { cron, mode: "all" },
  });
  return { tableId, scheduleId: dataOf(s).id };
}

/** Waits until `n` writes of a schedule (a PATCH's UPDATE) wait for a lock. */
async function patchWritesWaiting(n: number): Promise<void> {
  const reached = await waitFor(async () => {
    const [w] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock'
             and query like 'update "schedules"%'`,
    );
    return w?.n === n;
  }, 10_000);
  if (!reached) throw new Error(`${n} schedule writes never waited for the row lock`);
}

async function storedRun(scheduleId: string): Promise<Record<string, unknown>> {
  const [row] = await queryRows<{ run: Record<string, unknown> }>(
    db(),
    sql`select run from schedules where id = ${scheduleId}`,
  );
  if (!row) throw new Error(`schedule ${scheduleId} is gone`);
  return row.run;
}

describe("a schedule PATCH racing another write", () => {
  it("two PATCHes merged from one read both keep their fields", async () => {
    const { tableId, scheduleId } = await newScheduled("0 6 * * *");
    // Both PATCHes read the schedule while another transaction holds its row, so both
    // merge from the same run; their writes then wait on the row, one after the other.
    const [a, b] = await db().transaction(async (x) => {
      await x.execute(sql`select id from schedules where id = ${scheduleId} for update`);
      const first = patchSchedule(ctx, tableId, scheduleId, { limit: 5 });
      await patchWritesWaiting(1);
      const second = patchSchedule(ctx, tableId, scheduleId, { maxCredits: 40 });
      await patchWritesWaiting(2);
      return [first, second];
    });
    expect(await a).toMatchObject({ ok: true });
    expect(await b).toMatchObject({ ok: true });
    // Without the guard the second write puts back the run it merged from: one field lost.
    expect(await storedRun(scheduleId)).toMatchObject({ mode: "all", limit: 5, maxCredits: 40 });
  });

  it("a PATCH merged before the scheduler took a due time does not put it back", async () => {
    const { tableId, scheduleId } = await newScheduled("*/10 * * * *");
    await db().execute(
      sql`update schedules set next_run_at = '2026-06-01T10:00:00Z' where id = ${scheduleId}`,
    );
    const taken = new Date("2026-06-01T10:00:05Z");
    const [due] = (await dueSchedules(db(), taken, 100)).filter((d) => d.id === scheduleId);
    if (!due) throw new Error("the schedule is not due");
    // The API's clock: a moment before the due time while the PATCH merges, after the
    // scheduler took it once the PATCH's write gets the row.
    let apiNow = new Date("2026-06-01T09:59:59Z");
    const { patched } = await db().transaction(async (x) => {
      await x.execute(sql`select id from schedules where id = ${scheduleId} for update`);
      // A new cron moves the due time: merged now, it is the first from 09:59:59, 10:00.
      const patch = patchSchedule(ctx, tableId, scheduleId, { cron: "*/5 * * * *" }, () => apiNow);
      await patchWritesWaiting(1);
      // The scheduler takes 10:00 (moving the due time to 10:10) and starts its run.
      const fired = await fireSchedule({ ...scheduler(), db: x }, due, taken);
      expect(fired.kind).toBe("fired");
      apiNow = new Date("2026-06-01T10:00:06Z");
      // Wrapped: a promise returned bare would be awaited inside, holding the row forever.
      return { patched: patch };
    });
    const result = await patched;
    expect(result).toMatchObject({ ok: true, value: { cron: "*/5 * * * *" } });
    // Merged again after the run started: the first */5 time from 10:00:06, not 10:00.
    expect(result.ok && result.value.nextRunAt).toBe("2026-06-01T10:05:00.000Z");
    const again = await dueSchedules(db(), new Date("2026-06-01T10:00:07Z"), 100);
    expect(again.filter((d) => d.id === scheduleId)).toEqual([]);
    const [runs] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from dispatches where table_id = ${tableId}`,
    );
    expect(runs?.n).toBe(1);
  });

  it("a due time seen before a PATCH changed the cron (keeping that due time) moves on by the new cron", async () => {
    const { tableId, scheduleId } = await newScheduled("0 * * * *");
    await db().execute(
      sql`update schedules set next_run_at = '2026-06-01T10:00:00Z' where id = ${scheduleId}`,
    );
    const now = new Date("2026-06-01T10:00:05Z");
    const [seen] = (await dueSchedules(db(), now, 100)).filter((d) => d.id === scheduleId);
    if (!seen) throw new Error("the schedule is not due");
    // Every two hours, merged a minute before 10:00: its first time is 10:00 too.
    const patched = await patchSchedule(
      ctx,
      tableId,
      scheduleId,
      { cron: "0 */2 * * *" },
      () => new Date("2026-06-01T09:59:00Z"),
    );
    expect(patched.ok && patched.value.nextRunAt).toBe("2026-06-01T10:00:00.000Z");
    // The sighting's next time (11:00) came from the old cron: it takes nothing.
    expect((await fireSchedule(scheduler(), seen, now)).kind).toBe("lost");
    const [again] = (await dueSchedules(db(), now, 100)).filter((d) => d.id === scheduleId);
    if (!again) throw new Error("the due time was lost");
    expect((await fireSchedule(scheduler(), again, now)).kind).toBe("fired");
    const [row] = await queryRows<{ next: string; runs: number }>(
      db(),
      sql`select to_char(next_run_at at time zone 'UTC', 'HH24:MI') as next,
                 (select count(*)::int from dispatches where table_id = ${tableId}) as runs
            from schedules where id = ${scheduleId}`,
    );
    expect(row).toEqual({ next: "12:00", runs: 1 });
  });

  it("a PATCH whose every merge loses to another write answers 409 and writes nothing", async () => {
    const { tableId, scheduleId } = await newScheduled("0 6 * * *");
    // Each time the PATCH has merged, another PATCH is written before it.
    const competing = everyPoint("schedule:merged", async (n) => {
      const other = await patchSchedule(ctx, tableId, scheduleId, { limit: n });
      expect(other.ok).toBe(true);
    });
    const lost = await patchSchedule(
      ctx,
      tableId,
      scheduleId,
      { maxCredits: 40 },
      undefined,
      competing,
    );
    expect(lost).toMatchObject({ ok: false, reason: { code: "conflict" } });
    const run = await storedRun(scheduleId);
    expect(run).toMatchObject({ mode: "all", limit: 3 });
    expect(run).not.toHaveProperty("maxCredits");
  });
});

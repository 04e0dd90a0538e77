/**
 * Table schedules and mode `stale` (API.md "Schedules, destinations, views"): schedules
 * round-trip with a bad cron or zone refused and at most 20 per table even when creates
 * race; a due time starts one run however many schedulers saw it; a due time while the
 * last run is active is skipped and recorded; after downtime one run catches up; times
 * follow the zone across DST changes (a fake clock drives the scheduler, nothing waits);
 * a stale run (and a stale schedule) re-stamps only completed cells older than its hours
 * and cells never run, as its dry run counts. No worker runs here: stamped cells stay
 * queued, so each case reads exactly what the stamps did.
 */
import { queryRows } from "@db/client";
import { getDatabase } from "@db/instance";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { getBackend } from "@/backends/instance";
import type { Schemas } from "@/client/cellflow-client";
import { log } from "@/config/log";
import {
  CreateScheduleRequest,
  MAX_SCHEDULES_PER_TABLE,
  type PatchScheduleRequest,
} from "@/contracts/schedules";
import { fireDueSchedules, fireSchedule } from "@/services/schedule-fire";
import {
  createSchedule as createScheduleAt,
  patchSchedule as patchScheduleAt,
} from "@/services/schedules";
import { insertSchedule } from "@/store/schedules/create";
import { dueSchedules } from "@/store/schedules/read";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { newWorkspace, upperDefinition } from "../helpers/fixtures";
import { waitFor } from "../helpers/processes";

type ScheduleBody = z.input<typeof CreateScheduleRequest>;
const db = () => getDatabase().db;
const scheduler = () => ({ db: db(), backend: getBackend(), log: log() });

let key: string;
let workflowId: string;
beforeAll(async () => {
  await useTestDatabase();
  key = (await newWorkspace()).key;
  const wf = await apiClient(key).POST("/api/workflows", {
    body: { name: "upper", definition: upperDefinition },
  });
  workflowId = dataOf(wf).id;
});

/** A table with one workflow group `g` and `rows` rows (none: each run completes at once). */
async function newTable(rows: number): Promise<{ tableId: string; rowIds: string[] }> {
  const t = await apiClient(key).POST("/api/tables", {
    body: {
      name: "Scheduled",
      columns: [{ id: "v", name: "V", type: "text" }],
      groups: [{ id: "g", name: "G", kind: "workflow", workflowId, inputs: { v: "v" } }],
    },
  });
  const tableId = dataOf(t).id;
  if (rows === 0) return { tableId, rowIds: [] };
  const inserted = await apiClient(key).POST("/api/tables/{id}/rows", {
    params: { path: { id: tableId } },
    body: { rows: Array.from({ length: rows }, (_, i) => ({ data: { v: `r${i}` } })) },
  });
  return { tableId, rowIds: dataOf(inserted).rows.map((r) => r.id) };
}

function createSchedule(tableId: string, body: ScheduleBody) {
  return apiClient(key).POST("/api/tables/{id}/schedules", {
    params: { path: { id: tableId } },
    body,
  });
}

/** Puts a schedule's next due time at `at` (what time passing would have done). */
async function dueAt(scheduleId: string, at: string): Promise<void> {
  await db().execute(
    sql`update schedules set next_run_at = ${at}::timestamptz where id = ${scheduleId}`,
  );
}

async function scheduleRow(id: string) {
  const [row] = await queryRows<{
    next: string;
    last_run: string | null;
    last_dispatch_id: string | null;
    skipped: number;
    last_skipped: string | null;
  }>(
    db(),
    sql`select to_char(next_run_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI') as next,
               to_char(last_run_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI') as last_run,
               last_dispatch_id, skipped,
               to_char(last_skipped_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI') as last_skipped
          from schedules where id = ${id}`,
  );
  if (!row) throw new Error(`schedule ${id} is gone`);
  return row;
}

async function runsOf(tableId: string): Promise<number> {
  const [r] = await queryRows<{ n: number }>(
    db(),
    sql`select count(*)::int as n from dispatches where table_id = ${tableId}`,
  );
  return r?.n ?? 0;
}

describe("schedules through the API", () => {
  it("round-trip: create (UTC by default), list with next and last run, patch, disable, delete", async () => {
    const { tableId } = await newTable(0);
    const created = await createSchedule(tableId, { cron: "0 6 * * *", mode: "incomplete" });
    expect(created.response.status).toBe(201);
    const s = dataOf(created);
    expect(s).toMatchObject({
      tableId,
      cron: "0 6 * * *",
      timezone: "UTC",
      enabled: true,
      mode: "incomplete",
      lastRunAt: null,
      lastDispatchId: null,
      skipped: 0,
    });
    expect(s.nextRunAt).toMatch(/T06:00:00\.000Z$/);
    const list = await apiClient(key).GET("/api/tables/{id}/schedules", {
      params: { path: { id: tableId } },
    });
    expect(dataOf(list).schedules).toEqual([s]);

    const path = { id: tableId, scheduleId: s.id };
    const patched = await apiClient(key).PATCH("/api/tables/{id}/schedules/{scheduleId}", {
      params: { path },
      body: { cron: "30 2 * * *", timezone: "Europe/Berlin", mode: "stale", staleAfterHours: 24 },
    });
    expect(dataOf(patched)).toMatchObject({
      cron: "30 2 * * *",
      timezone: "Europe/Berlin",
      mode: "stale",
      staleAfterHours: 24,
    });
    expect(dataOf(patched).nextRunAt).toMatch(/T0[01]:30:00\.000Z$/);
    const off = await apiClient(key).PATCH("/api/tables/{id}/schedules/{scheduleId}", {
      params: { path },
      body: { enabled: false },
    });
    expect(dataOf(off)).toMatchObject({ enabled: false, nextRunAt: null });
    // A new mode drops the old one's hours.
    const back = await apiClient(key).PATCH("/api/tables/{id}/schedules/{scheduleId}", {
      params: { path },
      body: { mode: "all" },
    });
    expect(dataOf(back).mode).toBe("all");
    expect(dataOf(back).staleAfterHours).toBeUndefined();

    const del = () =>
      apiClient(key).DELETE("/api/tables/{id}/schedules/{scheduleId}", { params: { path } });
    expect((await del()).response.status).toBe(204);
    expect((await del()).response.status).toBe(404);
  });

  it("a PATCH keeps a due time not yet fired unless the cron, zone or switch changes", async () => {
    const { tableId } = await newTable(0);
    const s = dataOf(await createSchedule(tableId, { cron: "0 6 * * *", mode: "all" }));
    const path = { id: tableId, scheduleId: s.id };
    const patch = async (body: z.input<typeof PatchScheduleRequest>) =>
      dataOf(
        await apiClient(key).PATCH("/api/tables/{id}/schedules/{scheduleId}", {
          params: { path },
          body,
        }),
      );
    // Due, not yet fired.
    await dueAt(s.id, "2026-06-05T06:00:00Z");
    for (const body of [{ enabled: true }, { window: 5 }, { cron: "0 6 * * *", timezone: "UTC" }])
      expect((await patch(body)).nextRunAt, JSON.stringify(body)).toBe("2026-06-05T06:00:00.000Z");
    await patch({ enabled: false });
    expect(Date.parse((await patch({ enabled: true })).nextRunAt ?? "")).toBeGreaterThan(
      Date.now(),
    );
    await dueAt(s.id, "2026-06-05T06:00:00Z");
    expect((await patch({ cron: "0 7 * * *" })).nextRunAt).not.toBe("2026-06-05T06:00:00.000Z");
  });

  it("a PATCH with null drops the run's where, groups, limit, window and caps", async () => {
    const { tableId } = await newTable(0);
    const s = dataOf(
      await createSchedule(tableId, {
        cron: "0 6 * * *",
        mode: "all",
        groupIds: ["g"],
        where: [{ column: "v", op: "eq", value: "x" }],
        limit: 10,
        window: 5,
        maxCredits: 100,
        maxCreditsPerRow: 2,
      }),
    );
    const patched = await apiClient(key).PATCH("/api/tables/{id}/schedules/{scheduleId}", {
      params: { path: { id: tableId, scheduleId: s.id } },
      body: {
        groupIds: null,
        where: null,
        limit: null,
        window: null,
        maxCredits: null,
        maxCreditsPerRow: null,
      },
    });
    expect(patched.response.status).toBe(200);
    const after = dataOf(patched);
    for (const field of ["groupIds", "where", "limit", "window", "maxCredits", "maxCreditsPerRow"])
      expect(after, field).not.toHaveProperty(field);
    expect(after).toMatchObject({ mode: "all", cron: "0 6 * * *" });
  });

  it("a cron and zone cron-parser finds no next time for is a 400, not a 500", async () => {
    const { tableId } = await newTable(0);
    const [table] = await queryRows<{ workspace_id: string }>(
      db(),
      sql`select workspace_id from tables where id = ${tableId}`,
    );
    const ctx = { ...scheduler(), workspaceId: table?.workspace_id ?? "" };
    // cron-parser 5 throws "loop limit exceeded" from here for about a day.
    const clock = () => new Date("2026-04-03T15:00:00Z");
    const body = { cron: "0 2 * * *", timezone: "Australia/Lord_Howe", mode: "all" } as const;
    const created = await createSchedule(tableId, { ...body, timezone: "UTC" });
    const made = await createScheduleAt(ctx, tableId, CreateScheduleRequest.parse(body), clock);
    expect(made).toMatchObject({ ok: false, reason: { code: "validation_failed" } });
    const patched = await patchScheduleAt(
      ctx,
      tableId,
      dataOf(created).id,
      { timezone: "Australia/Lord_Howe" },
      clock,
    );
    expect(patched).toMatchObject({ ok: false, reason: { code: "validation_failed" } });
  });

  it("a bad cron, zone, group or stale mode without hours is refused (400)", async () => {
    const { tableId } = await newTable(0);
    for (const body of [
      { cron: "* * * * * *", mode: "all" },
      { cron: "61 * * * *", mode: "all" },
      { cron: "@hourly", mode: "all" },
      { cron: "* * * * *", timezone: "Mars/Olympus", mode: "all" },
      { cron: "* * * * *", mode: "all", groupIds: ["nope"] },
      { cron: "* * * * *", mode: "stale" },
      { cron: "* * * * *", mode: "all", staleAfterHours: 3 },
    ] as ScheduleBody[]) {
      const res = await createSchedule(tableId, body);
      expect(res.response.status, JSON.stringify(body)).toBe(400);
    }
    const list = await apiClient(key).GET("/api/tables/{id}/schedules", {
      params: { path: { id: tableId } },
    });
    expect(dataOf(list).schedules).toEqual([]);
  });

  it(`a table holds at most ${MAX_SCHEDULES_PER_TABLE} schedules, also when a create runs while another at the cap minus one has not committed`, async () => {
    const { tableId } = await newTable(0);
    for (let i = 0; i < MAX_SCHEDULES_PER_TABLE - 1; i++)
      expect(
        (await createSchedule(tableId, { cron: `${i} * * * *`, mode: "new" })).response.status,
      ).toBe(201);
    const [table] = await queryRows<{ workspace_id: string }>(
      db(),
      sql`select workspace_id from tables where id = ${tableId}`,
    );
    const workspaceId = table?.workspace_id ?? "";
    const fields = (id: string) => ({
      id,
      workspaceId,
      tableId,
      cron: "* * * * *",
      timezone: "UTC",
      enabled: false,
      run: { mode: "new" },
      nextRunAt: new Date(),
    });
    let second: Promise<{ ok: boolean }> | undefined;
    // The 20th create is in its transaction, not committed, when the 21st starts: the 21st
    // must wait for it (the table-row lock) and then count 20. Without the lock it counts
    // 19 on its snapshot and inserts: 21.
    const first = await db().transaction(async (tx) => {
      const made = await insertSchedule(tx, fields("sched_race_a"));
      second = insertSchedule(db(), fields("sched_race_b"));
      const settled = second.then(() => true);
      await waitFor(
        async () =>
          (await Promise.race([settled, Promise.resolve(false)])) ||
          (
            await queryRows<{ n: number }>(
              db(),
              sql`select count(*)::int as n from pg_stat_activity
                   where datname = current_database() and wait_event_type = 'Lock'`,
            )
          )[0]?.n === 1,
        10_000,
        20,
      );
      return made;
    });
    expect(first.ok).toBe(true);
    expect(await second).toEqual({ ok: false, reason: "limit_reached" });
    const [n] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from schedules where table_id = ${tableId}`,
    );
    expect(n?.n).toBe(MAX_SCHEDULES_PER_TABLE);
    const over = await createSchedule(tableId, { cron: "* * * * *", mode: "new" });
    expect(over.response.status).toBe(409);
  });
});

describe("the scheduler (fake clock)", () => {
  it("one due time starts one run, whichever scheduler saw it: a second with the same sighting loses", async () => {
    const { tableId } = await newTable(3);
    const s = dataOf(await createSchedule(tableId, { cron: "*/10 * * * *", mode: "all" }));
    await dueAt(s.id, "2026-06-01T10:00:00Z");
    const now = new Date("2026-06-01T10:00:05Z");
    // Both saw the due time before either took it.
    const seen = (await dueSchedules(db(), now, 100)).filter((d) => d.id === s.id);
    expect(seen).toHaveLength(1);
    const [due] = seen;
    if (!due) throw new Error("not due");
    const outcomes = await Promise.all([
      fireSchedule(scheduler(), due, now),
      fireSchedule(scheduler(), due, now),
    ]);
    expect(outcomes.map((o) => o.kind).sort()).toEqual(["fired", "lost"]);
    expect((await fireSchedule(scheduler(), due, now)).kind).toBe("lost");
    expect(await runsOf(tableId)).toBe(1);
    const row = await scheduleRow(s.id);
    expect(row).toMatchObject({ next: "2026-06-01T10:10", last_run: "2026-06-01T10:00" });
    const [cells] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from cells where dispatch_id = ${row.last_dispatch_id}`,
    );
    expect(cells?.n).toBe(3);
  });

  it("a due time while the last run is active is skipped and recorded; after downtime one run catches up", async () => {
    const { tableId } = await newTable(2);
    const s = dataOf(await createSchedule(tableId, { cron: "*/5 * * * *", mode: "all" }));
    await dueAt(s.id, "2026-06-02T08:00:00Z");
    const pass = (at: string) => fireDueSchedules(scheduler(), () => new Date(at));
    expect((await pass("2026-06-02T08:00:01Z")).fired).toBeGreaterThanOrEqual(1);
    const first = await scheduleRow(s.id);
    // No worker: the run stays active, so the next due time starts nothing.
    await pass("2026-06-02T08:05:01Z");
    expect(await scheduleRow(s.id)).toMatchObject({
      last_dispatch_id: first.last_dispatch_id,
      skipped: 1,
      last_skipped: "2026-06-02T08:05",
      next: "2026-06-02T08:10",
    });
    expect(await runsOf(tableId)).toBe(1);
    // The run ends; the scheduler was down for three hours (36 due times): one run.
    await db().execute(
      sql`update dispatches set status = 'completed' where id = ${first.last_dispatch_id}`,
    );
    await pass("2026-06-02T11:07:00Z");
    await pass("2026-06-02T11:07:30Z");
    expect(await runsOf(tableId)).toBe(2);
    expect(await scheduleRow(s.id)).toMatchObject({
      last_run: "2026-06-02T11:07",
      next: "2026-06-02T11:10",
      skipped: 1,
    });
  });

  it("a due time whose run no longer fits the table starts nothing, says why, and moves on", async () => {
    const { tableId } = await newTable(1);
    const s = dataOf(
      await createSchedule(tableId, { cron: "0 * * * *", mode: "all", groupIds: ["g"] }),
    );
    // As if group g had been deleted since.
    await db().execute(
      sql`update schedules set run = jsonb_set(run, '{groupIds}', '["gone"]') where id = ${s.id}`,
    );
    await dueAt(s.id, "2026-06-03T09:00:00Z");
    const report = await fireDueSchedules(scheduler(), () => new Date("2026-06-03T09:00:10Z"));
    expect(report.failed).toBeGreaterThanOrEqual(1);
    expect(await runsOf(tableId)).toBe(0);
    const list = await apiClient(key).GET("/api/tables/{id}/schedules", {
      params: { path: { id: tableId } },
    });
    const [after] = dataOf(list).schedules;
    expect(after?.lastError).toContain('unknown group "gone"');
    expect(after?.nextRunAt).toBe("2026-06-03T10:00:00.000Z");
  });

  async function lastError(tableId: string): Promise<string | null | undefined> {
    const list = await apiClient(key).GET("/api/tables/{id}/schedules", {
      params: { path: { id: tableId } },
    });
    return dataOf(list).schedules[0]?.lastError;
  }

  it("a schedule whose next time throws records why and moves on an hour; the schedules due after it still fire", async () => {
    const broken = await newTable(0);
    const fine = await newTable(0);
    const b = dataOf(await createSchedule(broken.tableId, { cron: "0 * * * *", mode: "all" }));
    const f = dataOf(await createSchedule(fine.tableId, { cron: "0 * * * *", mode: "all" }));
    // What cron-parser throws for a cron it once took (e.g. after an upgrade), oldest due.
    await db().execute(sql`update schedules set cron = 'not a cron' where id = ${b.id}`);
    await dueAt(b.id, "2026-07-01T08:00:00Z");
    await dueAt(f.id, "2026-07-01T09:00:00Z");
    const report = await fireDueSchedules(scheduler(), () => new Date("2026-07-01T09:00:05Z"));
    expect(report.failed).toBeGreaterThanOrEqual(1);
    expect(await runsOf(fine.tableId)).toBe(1);
    expect(await runsOf(broken.tableId)).toBe(0);
    expect(await scheduleRow(b.id)).toMatchObject({ next: "2026-07-01T10:00", last_run: null });
    expect(await lastError(broken.tableId)).toMatch(/no next due time could be computed/);
  });

  it("a due time whose run throws while stamping records why and moves to the next time", async () => {
    const { tableId } = await newTable(2);
    const s = dataOf(await createSchedule(tableId, { cron: "0 * * * *", mode: "all" }));
    await dueAt(s.id, "2026-07-02T08:00:00Z");
    const throwing = {
      ...scheduler(),
      pause: async (point: string) => {
        if (point === "run:created") throw new Error("stamping broke");
      },
    };
    const report = await fireDueSchedules(throwing, () => new Date("2026-07-02T08:00:05Z"));
    expect(report.failed).toBeGreaterThanOrEqual(1);
    expect(await runsOf(tableId)).toBe(0);
    expect(await scheduleRow(s.id)).toMatchObject({ next: "2026-07-02T09:00", last_run: null });
    expect(await lastError(tableId)).toMatch(/the run could not start: stamping broke/);
  });

  it("passes follow one another while a page is full, and end between schedules once the signal aborts", async () => {
    const { tableId } = await newTable(0);
    // Only this table's schedules are due: the counts below are theirs.
    await db().execute(sql`update schedules set enabled = false where table_id <> ${tableId}`);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const s = dataOf(await createSchedule(tableId, { cron: `${i} 6 * * *`, mode: "all" }));
      await dueAt(s.id, `2026-07-03T06:0${i}:00Z`);
      ids.push(s.id);
    }
    const clock = () => new Date("2026-07-03T06:30:00Z");
    // A page of 2: a single pass would start 2 of the 5.
    await fireDueSchedules(scheduler(), clock, { pageSize: 2 });
    for (const id of ids) expect((await scheduleRow(id)).last_run, id).toBe("2026-07-03T06:30");
    for (const id of ids) await dueAt(id, "2026-07-03T07:00:00Z");
    const stop = new AbortController();
    const stopping = {
      ...scheduler(),
      pause: async (point: string) => {
        if (point === "run:created") stop.abort();
      },
    };
    const report = await fireDueSchedules(stopping, () => new Date("2026-07-03T07:00:05Z"), {
      signal: stop.signal,
    });
    expect(report).toMatchObject({ fired: 1, failed: 0 });
    expect(await runsOf(tableId)).toBe(6);
  });

  /** Drives the scheduler every `stepMin` minutes over [from, to): each run it started, by time. */
  async function fires(scheduleId: string, from: string, to: string, stepMin: number) {
    const runs: string[] = [];
    let last = (await scheduleRow(scheduleId)).last_dispatch_id;
    for (let t = Date.parse(from); t < Date.parse(to); t += stepMin * 60_000) {
      await fireDueSchedules(scheduler(), () => new Date(t));
      const row = await scheduleRow(scheduleId);
      if (row.last_dispatch_id !== last && row.last_run) runs.push(row.last_run);
      last = row.last_dispatch_id;
    }
    return runs;
  }

  it("30 2 * * * in Europe/Berlin runs once a day across spring-forward and fall-back", async () => {
    // No rows: each run completes at once, so none is skipped for the one before.
    const { tableId } = await newTable(0);
    const s = dataOf(
      await createSchedule(tableId, { cron: "30 2 * * *", timezone: "Europe/Berlin", mode: "all" }),
    );
    await dueAt(s.id, "2026-03-28T01:30:00Z");
    expect(await fires(s.id, "2026-03-28T00:00:00Z", "2026-03-31T00:00:00Z", 30)).toEqual([
      "2026-03-28T01:30", // 02:30 CET
      "2026-03-29T01:30", // no 02:30 that day: 03:30 CEST
      "2026-03-30T00:30", // 02:30 CEST
    ]);
    await dueAt(s.id, "2026-10-24T00:30:00Z");
    expect(await fires(s.id, "2026-10-24T00:00:00Z", "2026-10-27T00:00:00Z", 30)).toEqual([
      "2026-10-24T00:30", // 02:30 CEST
      "2026-10-25T00:30", // 02:30 twice that day: once
      "2026-10-26T01:30", // 02:30 CET
    ]);
  });

  it("hourly in America/New_York runs once an hour through the fall-back night", async () => {
    const { tableId } = await newTable(0);
    const s = dataOf(
      await createSchedule(tableId, {
        cron: "0 * * * *",
        timezone: "America/New_York",
        mode: "all",
      }),
    );
    await dueAt(s.id, "2026-11-01T03:00:00Z");
    const runs = await fires(s.id, "2026-11-01T03:00:00Z", "2026-11-01T09:00:00Z", 20);
    expect(runs).toEqual([
      "2026-11-01T03:00",
      "2026-11-01T04:00",
      "2026-11-01T05:00", // 01:00 EDT
      "2026-11-01T06:00", // 01:00 EST
      "2026-11-01T07:00",
      "2026-11-01T08:00",
    ]);
  });
});

describe("mode stale", () => {
  /** Cells of every kind: fresh and old completed, old error and cancelled, never run. */
  async function agedTable() {
    const { tableId, rowIds } = await newTable(6);
    const run = startedRun(
      await apiClient(key).POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all", rowIds: rowIds.slice(0, 5) },
      }),
    );
    const [fresh, old, oldError, oldCancelled, running] = rowIds;
    const set = (rowId: string | undefined, status: string, hoursAgo: number | null) =>
      db().execute(sql`update cells set status = ${status}::cell_status,
                 finished_at = ${hoursAgo === null ? null : sql`now() - ${hoursAgo} * interval '1 hour'`}
           where row_id = ${rowId ?? ""}`);
    await set(fresh, "completed", 1);
    await set(old, "completed", 30);
    await set(oldError, "error", 30);
    await set(oldCancelled, "cancelled", 30);
    await set(running, "running", null);
    await db().execute(
      sql`update dispatches set status = 'completed' where id = ${run.dispatchId}`,
    );
    // rowIds[5] was never run.
    return { tableId, old: old ?? "", never: rowIds[5] ?? "" };
  }

  async function restamped(tableId: string, dispatchId: string | null): Promise<string[]> {
    const rows = await queryRows<{ row_id: string }>(
      db(),
      sql`select row_id from cells where table_id = ${tableId} and dispatch_id = ${dispatchId}
           and status = 'queued' order by row_id`,
    );
    return rows.map((r) => r.row_id);
  }

  it("a stale run re-runs only cells completed longer ago than its hours and cells never run, as its dry run counts", async () => {
    const { tableId, old, never } = await agedTable();
    const runs = (body: Schemas["CreateRunRequest"]) =>
      apiClient(key).POST("/api/tables/{id}/runs", { params: { path: { id: tableId } }, body });
    const dry = dataOf(await runs({ mode: "stale", staleAfterHours: 24, dryRun: true }));
    expect(dry).toMatchObject({ rows: 2, cells: 2 });
    const run = startedRun(await runs({ mode: "stale", staleAfterHours: 24 }));
    expect(run.stamped).toBe(2);
    const view = await apiClient(key).GET("/api/tables/{id}/runs/{dispatchId}", {
      params: { path: { id: tableId, dispatchId: run.dispatchId } },
    });
    expect(dataOf(view).staleAfterHours).toBe(24);
    expect(await restamped(tableId, run.dispatchId)).toEqual([old, never].sort());
    const bad = await runs({ mode: "stale" } as Schemas["CreateRunRequest"]);
    expect(bad.response.status).toBe(400);
  });

  it("a stale-mode schedule re-runs only the old cells", async () => {
    const { tableId, old, never } = await agedTable();
    const s = dataOf(
      await createSchedule(tableId, { cron: "0 * * * *", mode: "stale", staleAfterHours: 24 }),
    );
    const now = new Date();
    await dueAt(s.id, new Date(now.getTime() - 1_000).toISOString());
    await fireDueSchedules(scheduler(), () => now);
    const row = await scheduleRow(s.id);
    expect(row.last_dispatch_id).not.toBeNull();
    expect(await restamped(tableId, row.last_dispatch_id)).toEqual([old, never].sort());
  });
});
